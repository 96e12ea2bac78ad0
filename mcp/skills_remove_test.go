package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestRemoveSkills checks Server.RemoveSkills: by name and by SKILL.md
// URI, nested skills (whose files their enclosing skill also lists),
// resources registered over a skill's since, dynamic skills, names shared
// by skills at two paths, names that match nothing, and removing every
// skill. What remains is checked through a client: skills/list,
// resources/read of each file and resources/directory/read of each
// directory; a removal of any skill sends
// notifications/resources/list_changed, one that matches none sends none.
func TestRemoveSkills(t *testing.T) {
	checkGoroutines(t)
	const (
		pdf   = "skill://pdf-processing/SKILL.md"
		csv   = "skill://acme/data/csv-tools/SKILL.md"
		outer = "skill://outer/SKILL.md"
		inner = "skill://outer/inner/SKILL.md"
		dynMD = "skill://dyn/SKILL.md"
		dupX  = "skill://x/dup/SKILL.md"
		dupY  = "skill://y/dup/SKILL.md"
	)
	all := []string{csv, outer, inner, pdf}
	pdfFiles := []string{pdf, "skill://pdf-processing/references/FORMS.md", "skill://pdf-processing/references/my%20form.md", "skill://pdf-processing/scripts/fill.py", "skill://pdf-processing/img.bin"}
	pdfDirs := []string{"skill://pdf-processing", "skill://pdf-processing/references", "skill://pdf-processing/scripts"}
	addDyn := func(t *testing.T, s *Server) {
		err := s.AddSkill(&Skill{URI: dynMD, Frontmatter: map[string]any{"name": "dyn", "description": "d"}}, func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Text: "---\nname: dyn\ndescription: d\n---\n"}}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	addDups := func(t *testing.T, s *Server) {
		md := []byte("---\nname: dup\ndescription: Two paths, one name.\n---\n")
		if err := s.AddSkills(fstest.MapFS{"more/x/dup/SKILL.md": {Data: md}, "more/y/dup/SKILL.md": {Data: md}}, "more"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		setup      func(t *testing.T, s *Server) // more registrations
		remove     []string
		wantSkills []string // sorted
		gone, stay []string // resource URIs
		goneDirs   []string
		stayDirs   []string
		notified   bool
	}{
		{
			name:       "by name",
			remove:     []string{"pdf-processing"},
			wantSkills: without(all, pdf),
			gone:       pdfFiles,
			stay:       []string{csv, outer, inner},
			goneDirs:   pdfDirs,
			stayDirs:   []string{"skill://acme/data/csv-tools", "skill://outer", "skill://outer/inner"},
			notified:   true,
		},
		{
			name:       "by URI",
			remove:     []string{csv},
			wantSkills: without(all, csv),
			gone:       []string{csv, "skill://acme/data/csv-tools/references/FORMAT.md"},
			stay:       pdfFiles,
			goneDirs:   []string{"skill://acme/data/csv-tools", "skill://acme/data/csv-tools/references"},
			stayDirs:   pdfDirs,
			notified:   true,
		},
		{
			// The nested skill's SKILL.md is still a file of outer.
			name:       "nested skill",
			remove:     []string{"inner"},
			wantSkills: without(all, inner),
			stay:       []string{outer, inner},
			stayDirs:   []string{"skill://outer", "skill://outer/inner"},
			notified:   true, // skills/list changed, if no resource did
		},
		{
			// inner still serves its own files and directory.
			name:       "enclosing skill",
			remove:     []string{outer},
			wantSkills: without(all, outer),
			gone:       []string{outer},
			stay:       []string{inner},
			goneDirs:   []string{"skill://outer"},
			stayDirs:   []string{"skill://outer/inner"},
			notified:   true,
		},
		{
			name:       "both nested and enclosing",
			remove:     []string{"outer", "inner"},
			wantSkills: []string{csv, pdf},
			gone:       []string{outer, inner},
			goneDirs:   []string{"skill://outer", "skill://outer/inner"},
			notified:   true,
		},
		{
			name: "a resource registered over a skill file stays",
			setup: func(t *testing.T, s *Server) {
				must(t, s.AddResource(&Resource{URI: "skill://pdf-processing/img.bin", Name: "mine"}, func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
					return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Text: "mine"}}}, nil
				}))
			},
			remove:     []string{"pdf-processing"},
			wantSkills: without(all, pdf),
			gone:       without(pdfFiles, "skill://pdf-processing/img.bin"),
			stay:       []string{"skill://pdf-processing/img.bin"},
			goneDirs:   pdfDirs,
			notified:   true,
		},
		{
			name:       "dynamic skill",
			setup:      addDyn,
			remove:     []string{"dyn"},
			wantSkills: all,
			gone:       []string{dynMD, "skill://dyn/references/any.md"},
			stay:       []string{pdf},
			notified:   true,
		},
		{
			name:       "one name, two paths",
			setup:      addDups,
			remove:     []string{"dup"},
			wantSkills: all,
			gone:       []string{dupX, dupY},
			goneDirs:   []string{"skill://x/dup", "skill://y/dup"},
			notified:   true,
		},
		{
			name:       "one of two paths, by URI",
			setup:      addDups,
			remove:     []string{dupY},
			wantSkills: append(slices.Clone(all[:3]), pdf, dupX),
			gone:       []string{dupY},
			stay:       []string{dupX},
			goneDirs:   []string{"skill://y/dup"},
			stayDirs:   []string{"skill://x/dup"},
			notified:   true,
		},
		{
			name:       "no such skill",
			remove:     []string{"nope", "skill://nope/SKILL.md", "README.txt", ""},
			wantSkills: all,
			stay:       append([]string{csv, outer, inner}, pdfFiles...),
			stayDirs:   pdfDirs,
		},
		{
			name:       "nothing",
			wantSkills: all,
			stay:       []string{pdf},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := NewServer(&Implementation{Name: "skills", Version: "1"}, &ServerOptions{PageSize: 2, ListChangedDelay: -1})
			must(t, s.AddSkills(skillsFS(), "skills"))
			if tt.setup != nil {
				tt.setup(t, s)
			}
			changed := make(chan struct{}, 1)
			cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
				ResourceListChangedHandler: func(context.Context, *ClientRequest[*ResourceListChangedParams]) {
					select {
					case changed <- struct{}{}:
					default:
					}
				},
			}))
			s.mu.RLock()
			gen := s.generation
			s.mu.RUnlock()

			s.RemoveSkills(tt.remove...)

			s.mu.RLock()
			notified := s.generation != gen
			s.mu.RUnlock()
			if notified != tt.notified {
				t.Errorf("a list change was announced: %v, want %v", notified, tt.notified)
			}
			if tt.notified {
				wait, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				select {
				case <-changed:
				case <-wait.Done():
					t.Fatal("no notifications/resources/list_changed")
				}
			}
			var got []string
			for e, err := range cs.Skills(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, e.URI)
			}
			want := slices.Sorted(slices.Values(tt.wantSkills))
			if !slices.Equal(got, want) {
				t.Errorf("skills %v, want %v", got, want)
			}
			for _, uri := range tt.gone {
				if _, err := cs.ReadResource(ctx, &ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("resources/read %s: still served", uri)
				}
			}
			for _, uri := range tt.stay {
				if _, err := cs.ReadResource(ctx, &ReadResourceParams{URI: uri}); err != nil {
					t.Errorf("resources/read %s: %v", uri, err)
				}
			}
			var je *jsonrpc.Error
			for _, uri := range tt.goneDirs {
				if _, err := cs.ReadDirectory(ctx, &ReadDirectoryParams{URI: uri}); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("resources/directory/read %s: %v, want -32602", uri, err)
				}
			}
			for _, uri := range tt.stayDirs {
				if _, err := cs.ReadDirectory(ctx, &ReadDirectoryParams{URI: uri}); err != nil {
					t.Errorf("resources/directory/read %s: %v", uri, err)
				}
			}
			// Nothing of a removed skill is left behind.
			s.mu.RLock()
			defer s.mu.RUnlock()
			for uri := range s.skills.files {
				if _, ok := s.resources.get(uri); !ok {
					t.Errorf("skills.files holds %s, which is no longer served", uri)
				}
			}
			for uri, tmpl := range s.skills.templates {
				if _, ok := s.skills.byURI.get(uri); !ok {
					t.Errorf("skills.templates holds %s (%s) of a removed skill", uri, tmpl.template.URITemplate)
				}
			}
		})
	}
}

// TestRemoveAllSkills checks a server whose every skill is removed: it
// stops declaring the extension (and resources, which only skills gave
// it), answers the extension's methods as unknown, and serves no file.
func TestRemoveAllSkills(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	s := skillsServer(t, skillsFS())
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	if _, ok := s.capabilities().Extensions[SkillsExtension]; !ok {
		t.Fatal("the extension is not declared")
	}
	s.RemoveSkills("pdf-processing", "csv-tools", "outer", "inner")
	caps := s.capabilities()
	if _, ok := caps.Extensions[SkillsExtension]; ok || caps.Resources != nil {
		t.Errorf("after every skill is removed: capabilities %+v", caps)
	}
	s.mu.RLock()
	n, files, dirs := s.resources.len(), len(s.skills.files), len(s.skills.dirs)
	s.mu.RUnlock()
	if n != 0 || files != 0 || dirs != 0 {
		t.Errorf("left %d resources, %d skill files, %d directories", n, files, dirs)
	}
	var je *jsonrpc.Error
	if _, err := cs.ListSkills(ctx, nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("skills/list = %v, want -32601", err)
	}
	// Skills added again are served again.
	must(t, s.AddSkills(skillsFS(), "skills"))
	if res, err := cs.ListSkills(ctx, nil); err != nil || len(res.Skills) == 0 {
		t.Errorf("skills/list after AddSkills = %+v, %v", res, err)
	}
}

// TestFeaturesRemove checks features.remove, one name at a time and many
// in one pass (as RemoveSkills removes a skill's files): the names left
// stay sorted and agree with the map, and it reports whether any went.
func TestFeaturesRemove(t *testing.T) {
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("n%03d", i)
		}
		return out
	}
	tests := []struct {
		name   string
		remove []string
		want   []string
		ok     bool
	}{
		{"none", nil, names(40), false},
		{"unknown", []string{"x", "y"}, names(40), false},
		{"one", []string{"n007"}, without(names(40), "n007"), true},
		{"a few, one unknown", []string{"n000", "x", "n039"}, names(40)[1:39], true},
		{"many", names(40)[5:30], append(names(5), names(40)[30:]...), true},
		{"many, repeated and unknown", append(append(names(20), names(20)...), "x"), names(40)[20:], true},
		{"all", names(40), []string{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f features[int]
			for i, n := range names(40) {
				f.add(n, i)
			}
			if ok := f.remove(tt.remove...); ok != tt.ok {
				t.Errorf("remove reported %v, want %v", ok, tt.ok)
			}
			if !slices.Equal(f.names, tt.want) || len(f.byName) != len(tt.want) {
				t.Fatalf("names %v (%d in the map), want %v", f.names, len(f.byName), tt.want)
			}
			for _, n := range tt.want {
				if _, ok := f.get(n); !ok {
					t.Errorf("%s lost", n)
				}
			}
		})
	}
}

// without returns list without the items drop.
func without(list []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
}
