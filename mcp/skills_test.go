package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

const pdfSkillMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  author: example\n  version: \"1.0\"\n---\n\n# PDF processing\n\nSee references/FORMS.md.\n"

// skillsFS is a tree with a skill at the top, one at a nested path, and
// a nested skill inside another.
func skillsFS() fstest.MapFS {
	return fstest.MapFS{
		"skills/pdf-processing/SKILL.md":                  {Data: []byte(pdfSkillMD)},
		"skills/pdf-processing/references/FORMS.md":       {Data: []byte("Supporting content.\n")},
		"skills/pdf-processing/scripts/fill.py":           {Data: []byte("print('fill')\n")},
		"skills/pdf-processing/references/my form.md":     {Data: []byte("a form\n")},
		"skills/pdf-processing/img.bin":                   {Data: []byte{0xff, 0xfe, 0x00}},
		"skills/acme/data/csv-tools/SKILL.md":             {Data: []byte("---\nname: csv-tools\ndescription: Work with CSV files.\n---\nBody\n")},
		"skills/acme/data/csv-tools/references/FORMAT.md": {Data: []byte("format\n")},
		"skills/outer/SKILL.md":                           {Data: []byte("---\nname: outer\ndescription: Holds a nested skill.\n---\n")},
		"skills/outer/inner/SKILL.md":                     {Data: []byte("---\nname: inner\ndescription: Inside outer.\n---\n")},
		"skills/README.txt":                               {Data: []byte("not in any skill\n")},
	}
}

// countingFS counts the files opened in it.
type countingFS struct {
	fs.FS
	opens atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return c.FS.Open(name)
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return skillDigest(sum[:])
}

func TestAddSkillsRefuses(t *testing.T) {
	good := func() fstest.MapFS { return skillsFS() }
	tests := []struct {
		name    string
		fsys    func() fstest.MapFS
		root    string
		wantMsg string // the error names this
	}{
		{"dot-dot root", good, "../skills", `"../skills"`},
		{"no skill", func() fstest.MapFS { return fstest.MapFS{"x/a.txt": {Data: []byte("a")}} }, "x", "no SKILL.md under x"},
		{"no frontmatter", func() fstest.MapFS {
			m := good()
			m["skills/bad/SKILL.md"] = &fstest.MapFile{Data: []byte("# no frontmatter\n")}
			return m
		}, "skills", "skills/bad/SKILL.md"},
		{"bad frontmatter", func() fstest.MapFS {
			m := good()
			m["skills/bad/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: bad\ndescription: x\nalias: *a\n---\n")}
			return m
		}, "skills", "skills/bad/SKILL.md: line 4"},
		{"no description", func() fstest.MapFS {
			m := good()
			m["skills/bad/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: bad\n---\n")}
			return m
		}, "skills", "skills/bad/SKILL.md: the frontmatter has no description"},
		{"name rules", func() fstest.MapFS {
			m := good()
			m["skills/Bad--Name/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: Bad--Name\ndescription: x\n---\n")}
			return m
		}, "skills", "skills/Bad--Name/SKILL.md: skill name"},
		{"name differs from directory", func() fstest.MapFS {
			m := good()
			m["skills/dir/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: other\ndescription: x\n---\n")}
			return m
		}, "skills", `skills/dir/SKILL.md: the frontmatter name "other" differs`},
		{"too many files", func() fstest.MapFS {
			m := good()
			for i := range MaxSkillFiles {
				m["skills/pdf-processing/many/"+strings.Repeat("f", 1+i%7)+string(rune('a'+i%26))+strings.Repeat("x", i/26)] = &fstest.MapFile{}
			}
			return m
		}, "skills", "skills/pdf-processing/SKILL.md: the skill has"},
		{"too large", func() fstest.MapFS {
			m := good()
			m["skills/pdf-processing/big.bin"] = &fstest.MapFile{Data: make([]byte, MaxSkillSize)}
			return m
		}, "skills", "skills/pdf-processing/SKILL.md: the skill's files hold"},
		{"symlink", func() fstest.MapFS {
			m := good()
			m["skills/pdf-processing/escape"] = &fstest.MapFile{Data: []byte("../../etc/passwd"), Mode: fs.ModeSymlink}
			return m
		}, "skills", "skills/pdf-processing/escape: a symbolic link"},
		{"skill at the root of fsys", func() fstest.MapFS {
			return fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\ndescription: y\n---\n")}}
		}, ".", "SKILL.md: a skill at the root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			err := s.AddSkills(tt.fsys(), tt.root)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("AddSkills = %v, want an error naming %q", err, tt.wantMsg)
			}
			s.mu.RLock()
			n, r := s.skills.byURI.len(), s.resources.len()
			s.mu.RUnlock()
			if n != 0 || r != 0 {
				t.Errorf("after a failed AddSkills: %d skills, %d resources registered", n, r)
			}
		})
	}
}

func skillsServer(t *testing.T, fsys fs.FS) *Server {
	t.Helper()
	s := NewServer(&Implementation{Name: "skills", Version: "1"}, &ServerOptions{PageSize: 2})
	if err := s.AddSkills(fsys, "skills"); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSkillsServer checks the server side of the extension in both eras:
// the capability, skills/list (paginated, entries whole), skills/get,
// resources/directory/read and the SKILL.md resource.
func TestSkillsServer(t *testing.T) {
	checkGoroutines(t)
	for _, era := range []string{"handshake", "modern"} {
		t.Run(era, func(t *testing.T) {
			ctx := context.Background()
			s := skillsServer(t, skillsFS())
			var cs *ClientSession
			if era == "modern" {
				cs = modernPair(t, s, nil)
			} else {
				cs, _ = connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
			}
			caps := cs.serverCaps()
			if got := string(caps.Extensions[SkillsExtension]); got != `{"directoryRead":true}` {
				t.Errorf("extensions[%s] = %s", SkillsExtension, got)
			}
			if caps.Resources == nil {
				t.Error("no resources capability")
			}
			byURI := map[string]*Skill{}
			pages := 0
			var cursor string
			for {
				res, err := cs.ListSkills(ctx, &ListSkillsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if (era == "modern") != (res.TTLMs != nil && res.CacheScope != "") {
					t.Errorf("page %d: ttlMs %v, cacheScope %q on %s", pages, res.TTLMs, res.CacheScope, era)
				}
				for _, e := range res.Skills {
					if byURI[e.URI] != nil {
						t.Errorf("%s listed twice", e.URI)
					}
					byURI[e.URI] = e
				}
				if cursor = res.NextCursor; cursor == "" {
					break
				}
			}
			want := []string{"skill://acme/data/csv-tools/SKILL.md", "skill://outer/SKILL.md", "skill://outer/inner/SKILL.md", "skill://pdf-processing/SKILL.md"}
			if len(byURI) != len(want) || pages != 2 {
				t.Fatalf("listed %d skills in %d pages, want %d in 2", len(byURI), pages, len(want))
			}
			for _, u := range want {
				if byURI[u] == nil {
					t.Errorf("%s not listed", u)
				}
			}
			pdf := byURI["skill://pdf-processing/SKILL.md"]
			if pdf.Frontmatter["license"] != "Apache-2.0" || pdf.Frontmatter["metadata"].(map[string]any)["version"] != "1.0" {
				t.Errorf("frontmatter %v", pdf.Frontmatter)
			}
			files := map[string]SkillResource{}
			for _, f := range pdf.Resources.Files {
				files[f.URI] = f
			}
			if f := files["skill://pdf-processing/SKILL.md"]; f.Digest != digestOf(pdfSkillMD) || f.Size != int64(len(pdfSkillMD)) || len(files) != 5 || files["skill://pdf-processing/references/my%20form.md"].Size != 7 {
				t.Errorf("manifest %+v", pdf.Resources.Files)
			}
			if outer := byURI["skill://outer/SKILL.md"]; len(outer.Resources.Files) != 2 {
				t.Errorf("outer's manifest %+v does not hold the nested skill's files", outer.Resources.Files)
			}

			got, err := cs.GetSkill(ctx, &GetSkillParams{URI: pdf.URI})
			if err != nil {
				t.Fatal(err)
			}
			if got.Skill.URI != pdf.URI || (era == "modern") != (got.TTLMs != nil) {
				t.Errorf("skills/get = %+v", got)
			}
			var je *jsonrpc.Error
			if _, err := cs.GetSkill(ctx, &GetSkillParams{URI: "skill://nope/SKILL.md"}); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("skills/get of an unknown skill = %v, want -32602", err)
			}

			dir, err := cs.ReadDirectory(ctx, &ReadDirectoryParams{URI: "skill://pdf-processing"})
			if err != nil {
				t.Fatal(err)
			}
			kids := map[string]string{}
			for c, err := range pagesOf(ctx, cs, "skill://pdf-processing", dir) {
				if err != nil {
					t.Fatal(err)
				}
				kids[c.URI] = c.MIMEType
			}
			wantKids := map[string]string{
				"skill://pdf-processing/SKILL.md":   "text/markdown",
				"skill://pdf-processing/img.bin":    "application/octet-stream",
				"skill://pdf-processing/references": MIMETypeDirectory,
				"skill://pdf-processing/scripts":    MIMETypeDirectory,
			}
			if len(kids) != len(wantKids) {
				t.Errorf("directory children %v, want %v", kids, wantKids)
			}
			for u, m := range wantKids {
				if kids[u] != m {
					t.Errorf("child %s: mimeType %q, want %q", u, kids[u], m)
				}
			}
			for _, bad := range []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/", "skill://acme", "skill://nope"} {
				if _, err := cs.ReadDirectory(ctx, &ReadDirectoryParams{URI: bad}); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("resources/directory/read %s = %v, want -32602", bad, err)
				}
			}

			var md *Resource
			for r, err := range cs.Resources(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if r.URI == pdf.URI {
					md = r
				}
				if strings.Contains(r.URI, "README") {
					t.Errorf("a file outside every skill is served: %s", r.URI)
				}
			}
			if md == nil || md.Name != "pdf-processing" || md.Description != "Extract, fill, and assemble PDF documents" || md.MIMEType != "text/markdown" {
				t.Fatalf("SKILL.md resource %+v", md)
			}
			if string(md.Meta.Other[SkillsMetaPrefix+"license"]) != `"Apache-2.0"` {
				t.Errorf("SKILL.md _meta %v", md.Meta.Other)
			}
			rr, err := cs.ReadResource(ctx, &ReadResourceParams{URI: pdf.URI})
			if err != nil {
				t.Fatal(err)
			}
			if c := rr.Contents[0]; c.Text != pdfSkillMD || c.MIMEType != "text/markdown" {
				t.Errorf("SKILL.md read as %+v", c)
			}
			rr, err = cs.ReadResource(ctx, &ReadResourceParams{URI: "skill://pdf-processing/img.bin"})
			if err != nil {
				t.Fatal(err)
			}
			if c := rr.Contents[0]; string(c.Blob) != "\xff\xfe\x00" {
				t.Errorf("binary file read as %+v", c)
			}
		})
	}
}

// pagesOf iterates over a directory's children from its first page.
func pagesOf(ctx context.Context, cs *ClientSession, uri string, first *ReadDirectoryResult) func(func(*Resource, error) bool) {
	return func(yield func(*Resource, error) bool) {
		res := first
		for {
			for _, r := range res.Resources {
				if !yield(r, nil) {
					return
				}
			}
			if res.NextCursor == "" {
				return
			}
			var err error
			if res, err = cs.ReadDirectory(ctx, &ReadDirectoryParams{URI: uri, Cursor: res.NextCursor}); err != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// TestSkillsWithoutExtension checks that a server without skills does
// not answer the methods, and that the client refuses directory reads
// without directoryRead.
func TestSkillsWithoutExtension(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	if err := s.AddSkill(&Skill{URI: "skill://dyn/SKILL.md", Frontmatter: map[string]any{"name": "dyn", "description": "d"}}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Text: "---\nname: dyn\ndescription: d\n---\n"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	if got := string(cs.serverCaps().Extensions[SkillsExtension]); got != `{}` {
		t.Errorf("a server with dynamic skills only declares %s", got)
	}
	var ce *CapabilityError
	if _, err := cs.ReadDirectory(ctx, &ReadDirectoryParams{URI: "skill://dyn"}); !errors.As(err, &ce) {
		t.Errorf("ReadDirectory without directoryRead = %v, want a *CapabilityError", err)
	}
	res, err := cs.ListSkills(ctx, nil)
	if err != nil || len(res.Skills) != 1 || !res.Skills[0].Resources.Dynamic {
		t.Fatalf("ListSkills = %+v, %v", res, err)
	}
	l, err := cs.LoadSkill(ctx, res.Skills[0])
	if err != nil {
		t.Fatal(err)
	}
	if b, err := l.ReadFile(ctx, "any/file.md"); err != nil || len(b) == 0 {
		t.Errorf("ReadFile of a dynamic skill = %q, %v", b, err)
	}

	plain := NewServer(&Implementation{Name: "plain", Version: "1"}, nil)
	pcs, _ := connect(t, plain, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	if _, err := pcs.ListSkills(ctx, nil); !errors.As(err, &ce) {
		t.Errorf("ListSkills of a server without skills = %v, want a *CapabilityError", err)
	}
	var je *jsonrpc.Error
	if err := pcs.call(ctx, MethodSkillsList, &ListSkillsParams{}, &ListSkillsResult{}); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("skills/list on a server without skills = %v, want -32601", err)
	}
}

// TestLoadSkill checks the client's verification: size before digest,
// digest, frontmatter field by field, the entry's own rules, and files
// not in the entry; nothing is read before LoadSkill, and nothing after
// a failed check of the entry.
func TestLoadSkill(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	fsys := &countingFS{FS: skillsFS()}
	s := skillsServer(t, fsys)
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	opened := fsys.opens.Load()
	var pdf *Skill
	for e, err := range cs.Skills(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if e.URI == "skill://pdf-processing/SKILL.md" {
			pdf = e
		}
	}
	if n := fsys.opens.Load() - opened; n != 0 {
		t.Fatalf("listing skills opened %d files", n)
	}
	l, err := cs.LoadSkill(ctx, pdf)
	if err != nil {
		t.Fatal(err)
	}
	if n := fsys.opens.Load() - opened; n != 1 {
		t.Errorf("LoadSkill opened %d files, want the SKILL.md only", n)
	}
	if string(l.Content) != pdfSkillMD || !strings.HasPrefix(string(l.Body), "\n# PDF") {
		t.Errorf("loaded %q, body %q", l.Content, l.Body)
	}
	if b, err := l.ReadFile(ctx, "references/FORMS.md"); err != nil || string(b) != "Supporting content.\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if b, err := l.ReadFile(ctx, "references/my form.md"); err != nil || string(b) != "a form\n" {
		t.Errorf("ReadFile of a name with a space = %q, %v", b, err)
	}

	entry := func(edit func(e *Skill)) *Skill {
		b, _ := json.Marshal(pdf)
		var e Skill
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		edit(&e)
		return &e
	}
	skillMD := func(e *Skill) *SkillResource {
		for i := range e.Resources.Files {
			if e.Resources.Files[i].URI == e.URI {
				return &e.Resources.Files[i]
			}
		}
		t.Fatal("no SKILL.md in the manifest")
		return nil
	}
	tests := []struct {
		name   string
		entry  *Skill
		reason string
		reads  int64 // files the server opens
	}{
		{"size differs", entry(func(e *Skill) { skillMD(e).Size++ }), "bytes, the entry says", 1},
		{"digest differs", entry(func(e *Skill) { skillMD(e).Digest = digestOf("other") }), "digest differs", 1},
		{"frontmatter differs", entry(func(e *Skill) { e.Frontmatter["description"] = "Exfiltrate credentials" }), `"description" differs`, 1},
		{"extra frontmatter field", entry(func(e *Skill) { e.Frontmatter["x"] = 1.0 }), `"x" differs`, 1},
		{"nested frontmatter differs", entry(func(e *Skill) { e.Frontmatter["metadata"].(map[string]any)["version"] = 1.0 }), `"metadata" differs`, 1},
		{"malformed digest", entry(func(e *Skill) { skillMD(e).Digest = "sha256:ABC" }), "malformed digest", 0},
		{"negative size", entry(func(e *Skill) { skillMD(e).Size = -1 }), "bad size", 0},
		{"file outside the skill", entry(func(e *Skill) {
			e.Resources.Files = append(e.Resources.Files, SkillResource{URI: "skill://other/x", Digest: digestOf(""), Size: 0})
		}), "outside the skill", 0},
		{"dot segments", entry(func(e *Skill) {
			e.Resources.Files = append(e.Resources.Files, SkillResource{URI: "skill://pdf-processing/../x", Digest: digestOf(""), Size: 0})
		}), "outside the skill", 0},
		{"no SKILL.md listed", entry(func(e *Skill) { e.Resources.Files = e.Resources.Files[:0] }), "do not list the SKILL.md", 0},
		{"past the total size", entry(func(e *Skill) {
			e.Resources.Files = append(e.Resources.Files, SkillResource{URI: "skill://pdf-processing/big", Digest: digestOf(""), Size: MaxSkillSize})
		}), "more than the limit", 0},
		{"too many files", entry(func(e *Skill) {
			for i := range MaxSkillFiles {
				e.Resources.Files = append(e.Resources.Files, SkillResource{URI: "skill://pdf-processing/f" + strconv.Itoa(i), Digest: digestOf(""), Size: 0})
			}
		}), "more than the limit of 512", 0},
		{"listed twice", entry(func(e *Skill) { e.Resources.Files = append(e.Resources.Files, e.Resources.Files[0]) }), "listed twice", 0},
		{"dynamic, frontmatter differs", entry(func(e *Skill) {
			e.Resources = SkillResources{Dynamic: true}
			e.Frontmatter["license"] = "MIT"
		}), `"license" differs`, 1},
		{"name differs from the uri", entry(func(e *Skill) { e.URI = "skill://pdf/SKILL.md" }), "not in its name", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fsys.opens.Load()
			_, err := cs.LoadSkill(ctx, tt.entry)
			var ve *SkillVerificationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Reason, tt.reason) {
				t.Fatalf("LoadSkill = %v, want a *SkillVerificationError saying %q", err, tt.reason)
			}
			if n := fsys.opens.Load() - before; n != tt.reads {
				t.Errorf("the server opened %d files, want %d", n, tt.reads)
			}
		})
	}

	for _, rel := range []string{"references/NOPE.md", "../acme/data/csv-tools/SKILL.md", "./SKILL.md", "/etc/passwd"} {
		before := fsys.opens.Load()
		var ve *SkillVerificationError
		if _, err := l.ReadFile(ctx, rel); !errors.As(err, &ve) {
			t.Errorf("ReadFile(%q) = %v, want a *SkillVerificationError", rel, err)
		}
		if n := fsys.opens.Load() - before; n != 0 {
			t.Errorf("ReadFile(%q) asked the server", rel)
		}
	}
}

// TestSkillResourcesJSON checks the two forms of a manifest, through
// encoding/json as on the wire.
func TestSkillResourcesJSON(t *testing.T) {
	for _, tt := range []struct {
		in   Skill
		want string
	}{
		{Skill{URI: "skill://a/SKILL.md", Frontmatter: map[string]any{"name": "a"}, Resources: SkillResources{Dynamic: true}}, `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":"dynamic"}`},
		{Skill{URI: "skill://a/SKILL.md", Frontmatter: map[string]any{}, Resources: SkillResources{Files: []SkillResource{{URI: "skill://a/SKILL.md", Digest: "sha256:00", Size: 3}}}}, `{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":3}]}`},
	} {
		std, err := json.Marshal(&tt.in)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := marshalStd(&tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(std) != tt.want || string(wire) != tt.want {
			t.Errorf("encoding/json %s\nwire %s\nwant %s", std, wire, tt.want)
		}
		var back Skill
		if err := unmarshalStd(wire, &back); err != nil || back.Resources.Dynamic != tt.in.Resources.Dynamic || len(back.Resources.Files) != len(tt.in.Resources.Files) {
			t.Errorf("decoded %+v, %v", back, err)
		}
	}
	var s Skill
	if err := unmarshalStd([]byte(`{"uri":"u","frontmatter":{},"resources":"static"}`), &s); err == nil {
		t.Error(`resources "static" decoded`)
	}
}

// TestAddSkillsOSSymlink checks that a symbolic link in a skill on disk
// (os.DirFS) is refused, naming it, rather than followed out of the
// skill.
func TestAddSkillsOSSymlink(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, "skills", "leaky")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: leaky\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(skill, "notes.txt")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	err := s.AddSkills(os.DirFS(dir), "skills")
	if err == nil || !strings.Contains(err.Error(), "skills/leaky/notes.txt: a symbolic link") {
		t.Fatalf("AddSkills = %v, want the link refused by name", err)
	}
}
