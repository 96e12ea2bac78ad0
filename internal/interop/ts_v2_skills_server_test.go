package interop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/frontmatter"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// skillsFixtureDir is the skill tree mcpkit's conformance fixture server
// serves (pdf-processing with a references/ directory, and csv-tools at
// the nested skill path acme/data/csv-tools), relative to the module
// root. The TypeScript server of ts_v2_skills_server.mjs serves the same
// files.
const skillsFixtureDir = "internal/conformance/everything/skills"

// fixtureSkill is what a skill of the fixture tree must be, computed here
// from the files, independently of both SDKs.
type fixtureSkill struct {
	name        string
	uri         string         // of its SKILL.md
	files       map[string]int // relative path -> index in manifest
	manifest    []mcp.SkillResource
	frontmatter map[string]any
	content     map[string][]byte // relative path -> bytes
}

// fixtureDir is a directory within a skill, as resources/directory/read
// must list it: its direct children's URIs, each with whether it is a
// directory.
type fixtureDir map[string]bool

// readSkillsFixture reads the fixture tree under root: its skills by the
// URI of their SKILL.md, and the directories within them by URI.
func readSkillsFixture(t *testing.T, root string) (map[string]*fixtureSkill, map[string]fixtureDir) {
	t.Helper()
	fsys := os.DirFS(root)
	var skillDirs []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Base(p) == "SKILL.md" {
			skillDirs = append(skillDirs, path.Dir(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	skills := map[string]*fixtureSkill{}
	dirs := map[string]fixtureDir{}
	for _, dir := range skillDirs {
		s := &fixtureSkill{name: path.Base(dir), uri: "skill://" + dir + "/SKILL.md", files: map[string]int{}, content: map[string][]byte{}}
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				kids, err := fs.ReadDir(fsys, p)
				if err != nil {
					return err
				}
				fd := fixtureDir{}
				for _, k := range kids {
					fd["skill://"+path.Join(p, k.Name())] = k.IsDir()
				}
				dirs["skill://"+p] = fd
				return nil
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			rel := strings.TrimPrefix(p, dir+"/")
			s.files[rel] = len(s.manifest)
			s.content[rel] = b
			s.manifest = append(s.manifest, mcp.SkillResource{URI: "skill://" + p, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if s.frontmatter, _, err = frontmatter.Parse(s.content["SKILL.md"]); err != nil {
			t.Fatalf("%s: %v", s.uri, err)
		}
		slices.SortFunc(s.manifest, func(a, b mcp.SkillResource) int { return strings.Compare(a.URI, b.URI) })
		for i, r := range s.manifest {
			s.files[strings.TrimPrefix(r.URI, "skill://"+dir+"/")] = i
		}
		skills[s.uri] = s
	}
	if len(skills) < 2 || len(dirs) < 3 {
		t.Fatalf("the fixture at %s has %d skills and %d directories; the test wants a nested skill path and a references/ directory", root, len(skills), len(dirs))
	}
	return skills, dirs
}

// tsSkillsServer runs ts_v2_skills_server.mjs.
type tsSkillsServer struct {
	modules, root string
}

// command returns the command that serves flavour over stdio.
func (s *tsSkillsServer) command(t *testing.T, flavour string, stderr io.Writer) *exec.Cmd {
	t.Helper()
	work, script := stageScript(t, s.modules, "ts_v2_skills_server.mjs")
	cmd := exec.Command("node", script, "stdio", flavour, s.root)
	cmd.Dir = work
	cmd.Stderr = stderr
	return cmd
}

// startHTTP serves flavour over Streamable HTTP until the test ends and
// returns its URL.
func (s *tsSkillsServer) startHTTP(ctx context.Context, t *testing.T, flavour string, stderr io.Writer) string {
	t.Helper()
	work, script := stageScript(t, s.modules, "ts_v2_skills_server.mjs")
	cmd := exec.CommandContext(ctx, "node", script, "http", flavour, s.root)
	cmd.Dir = work
	cmd.Stderr = stderr
	return startListening(t, cmd)
}

// skillsPeer is mcpkit's client side of one connection to the TypeScript
// skills server.
type skillsPeer struct {
	cs      *mcp.ClientSession
	flavour string
	modern  bool
	sent    *sync.Map // method -> *atomic.Int64: the requests the client sent
}

// sentCount returns how many method requests the client has sent.
func (p *skillsPeer) sentCount(method string) int64 {
	n, _ := p.sent.LoadOrStore(method, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

// countSent is sending middleware that counts the requests sent, by
// method, in sent.
func countSent(sent *sync.Map) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
			n, _ := sent.LoadOrStore(req.Method(), new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return next(ctx, req)
		}
	}
}

// TestTypeScriptV2SkillsServer reads the skills the official TypeScript
// SDK v2 server's Skills extension (@modelcontextprotocol/server/ext/skills,
// run by ts_v2_skills_server.mjs) serves from the conformance fixture's
// skill tree, with mcpkit's skills client, over stdio (serveStdio) and
// Streamable HTTP (createMcpHandler), speaking 2026-07-28 (EraModern) and
// the handshake era (EraHandshake, 2025-11-25). The server serves the tree
// as the SDK's own catalog ("catalog": directoryRead, pages of one entry,
// a cache hint) and through a SkillSource without directory reads
// ("source"). On each connection: every skill is listed (all pages) and
// got, and equals what the files make of it (URIs, sizes, digests,
// frontmatter); LoadSkill verifies each SKILL.md, ReadFile every other
// listed file; a file the entry does not list is refused without asking
// the server; resources/directory/read lists each skill directory's
// children when the server declares directoryRead, and is refused
// without asking when it does not. A third flavour, "tampered" (stdio),
// serves content and entries that disagree, which the client refuses.
func TestTypeScriptV2SkillsServer(t *testing.T) {
	modules := nodeModules(t)
	t.Logf("%s %s", pkgServerV2, pinnedVersions(t)[pkgServerV2])
	root := filepath.Join(repoRoot(t), filepath.FromSlash(skillsFixtureDir))
	skills, dirs := readSkillsFixture(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	srv := &tsSkillsServer{modules: modules, root: root}
	var httpStderr syncBuffer
	urls := map[string]string{}
	for _, flavour := range []string{"catalog", "source"} {
		urls[flavour] = srv.startHTTP(ctx, t, flavour, &httpStderr)
	}
	type era struct {
		name   string
		era    mcp.Era
		modern bool
	}
	eras := []era{{mcp.Version20260728, mcp.EraModern, true}, {mcp.Version20251125, mcp.EraHandshake, false}}
	type testCase struct {
		flavour, kind string
		era           era
	}
	var cases []testCase
	for _, flavour := range []string{"catalog", "source", "tampered"} {
		for _, kind := range []string{"stdio", "http"} {
			if flavour == "tampered" && kind == "http" {
				continue
			}
			for _, e := range eras {
				cases = append(cases, testCase{flavour, kind, e})
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.flavour+"/"+tc.kind+"/"+tc.era.name, func(t *testing.T) {
			stderr := &httpStderr
			var tr transport.Transport = &transport.StreamableClientTransport{URL: urls[tc.flavour], DisableSSEFallback: true}
			if tc.kind == "stdio" {
				stderr = &syncBuffer{}
				tr = &transport.CommandTransport{Command: srv.command(t, tc.flavour, stderr), TerminateDuration: 3 * time.Second}
			}
			var wire syncBuffer
			tr = &transport.LoggingTransport{Transport: tr, Writer: &wire}
			p := &skillsPeer{flavour: tc.flavour, modern: tc.era.modern, sent: &sync.Map{}}
			c := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop", Version: "1.0.0"}, &mcp.ClientOptions{
				Era:               tc.era.era,
				SendingMiddleware: []mcp.Middleware{countSent(p.sent)},
			})
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			cs, err := c.Connect(cctx, tr)
			if err != nil {
				t.Fatalf("connect: %v\nwire:\n%s\nserver stderr:\n%s", err, tail(wire.String(), 8000), tail(stderr.String(), 4000))
			}
			defer cs.Close()
			p.cs = cs
			if got := cs.ProtocolVersion(); got != tc.era.name {
				t.Fatalf("ProtocolVersion %q, want %s", got, tc.era.name)
			}
			if tc.flavour == "tampered" {
				checkTamperedSkills(cctx, t, p, skills)
			} else {
				checkSkillsCapability(t, p)
				checkSkillsListing(cctx, t, p, skills)
				checkSkillsGet(cctx, t, p, skills)
				checkSkillsLoad(cctx, t, p, skills)
				checkSkillsDirectories(cctx, t, p, skills, dirs)
			}
			if t.Failed() {
				t.Logf("wire:\n%s\nserver stderr:\n%s", tail(wire.String(), 16000), tail(stderr.String(), 4000))
			}
		})
	}
}

// checkSkillsCapability checks the extension's declaration: with
// directoryRead from the catalog only, and resources beside it.
func checkSkillsCapability(t *testing.T, p *skillsPeer) {
	t.Helper()
	caps := p.cs.InitializeResult().Capabilities
	raw, ok := caps.Extensions[mcp.SkillsExtension]
	if !ok || caps.Resources == nil {
		t.Fatalf("capabilities %s: no %s extension, or no resources", mustJSON(caps), mcp.SkillsExtension)
	}
	want := `{}`
	if p.flavour == "catalog" {
		want = `{"directoryRead":true}`
	}
	if string(raw) != want {
		t.Errorf("extension settings %s, want %s", raw, want)
	}
}

// checkSkillsListing lists the skills (every page, following cursors) and
// compares each entry with the fixture, and the cache hints of each page
// with the server's: ttlMs and cacheScope in 2026-07-28 only.
func checkSkillsListing(ctx context.Context, t *testing.T, p *skillsPeer, skills map[string]*fixtureSkill) {
	t.Helper()
	var got []*mcp.Skill
	cursor, pages := "", 0
	for {
		res, err := p.cs.ListSkills(ctx, &mcp.ListSkillsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list (page %d): %v", pages+1, err)
		}
		pages++
		checkCacheHints(t, "skills/list", p, res.TTLMs, res.CacheScope)
		got = append(got, res.Skills...)
		if cursor = res.NextCursor; cursor == "" || pages > len(skills) {
			break
		}
	}
	wantPages := 1
	if p.flavour == "catalog" {
		wantPages = len(skills) // a page per entry
	}
	if pages != wantPages {
		t.Errorf("skills/list took %d pages, want %d", pages, wantPages)
	}
	// The iterator gets the same entries.
	var iterated []*mcp.Skill
	for s, err := range p.cs.Skills(ctx) {
		if err != nil {
			t.Fatalf("Skills: %v", err)
		}
		iterated = append(iterated, s)
	}
	if string(mustJSON(iterated)) != string(mustJSON(got)) {
		t.Errorf("Skills gave %s, skills/list %s", mustJSON(iterated), mustJSON(got))
	}
	seen := map[string]bool{}
	for _, s := range got {
		if seen[s.URI] {
			t.Errorf("%s listed twice", s.URI)
		}
		seen[s.URI] = true
		checkSkillEntry(t, "skills/list", s, skills)
	}
	if len(seen) != len(skills) {
		t.Errorf("listed %d skills, want %d", len(seen), len(skills))
	}
}

// checkCacheHints checks a result's cache hints: none in the handshake
// era; in 2026-07-28 the catalog's (60 s, public) or the SDK's default (0,
// private).
func checkCacheHints(t *testing.T, what string, p *skillsPeer, ttl *int64, scope mcp.CacheScope) {
	t.Helper()
	got := "none"
	if ttl != nil {
		got = strconv.FormatInt(*ttl, 10)
	}
	got += "/" + string(scope)
	want := "none/"
	switch {
	case !p.modern:
	case p.flavour == "catalog":
		want = "60000/" + string(mcp.CacheScopePublic)
	default:
		want = "0/" + string(mcp.CacheScopePrivate)
	}
	if got != want {
		t.Errorf("%s: ttlMs/cacheScope %s, want %s", what, got, want)
	}
}

// checkSkillEntry compares an entry with the fixture's skill.
func checkSkillEntry(t *testing.T, what string, s *mcp.Skill, skills map[string]*fixtureSkill) {
	t.Helper()
	want, ok := skills[s.URI]
	if !ok {
		t.Errorf("%s: %s is no skill of the fixture", what, s.URI)
		return
	}
	if s.Resources.Dynamic || !reflect.DeepEqual(s.Resources.Files, want.manifest) {
		t.Errorf("%s: %s resources %s, want %s", what, s.URI, mustJSON(s.Resources), mustJSON(want.manifest))
	}
	if string(mustJSON(s.Frontmatter)) != string(mustJSON(want.frontmatter)) {
		t.Errorf("%s: %s frontmatter %s, want %s", what, s.URI, mustJSON(s.Frontmatter), mustJSON(want.frontmatter))
	}
}

// checkSkillsGet gets every skill by its URI, and an unknown one: -32602.
func checkSkillsGet(ctx context.Context, t *testing.T, p *skillsPeer, skills map[string]*fixtureSkill) {
	t.Helper()
	for uri := range skills {
		res, err := p.cs.GetSkill(ctx, &mcp.GetSkillParams{URI: uri})
		if err != nil {
			t.Errorf("skills/get %s: %v", uri, err)
			continue
		}
		checkCacheHints(t, "skills/get", p, res.TTLMs, res.CacheScope)
		if res.Skill == nil || res.Skill.URI != uri {
			t.Errorf("skills/get %s: %s", uri, mustJSON(res))
			continue
		}
		checkSkillEntry(t, "skills/get", res.Skill, skills)
	}
	_, err := p.cs.GetSkill(ctx, &mcp.GetSkillParams{URI: "skill://no-such-skill/SKILL.md"})
	if je := (*jsonrpc.Error)(nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("skills/get of an unknown skill: %v, want JSON-RPC error %d", err, jsonrpc.CodeInvalidParams)
	}
}

// checkSkillsLoad loads every skill (its SKILL.md verified) and reads
// every other file it lists (verified), comparing each with the fixture's
// bytes; then asks for a file the entry does not list, which the client
// refuses without a request, and reads such a file directly, which the
// server refuses.
func checkSkillsLoad(ctx context.Context, t *testing.T, p *skillsPeer, skills map[string]*fixtureSkill) {
	t.Helper()
	for uri, want := range skills {
		reads := p.sentCount(mcp.MethodResourcesRead)
		l, err := p.cs.LoadSkill(ctx, &mcp.Skill{URI: uri, Frontmatter: want.frontmatter, Resources: mcp.SkillResources{Files: want.manifest}})
		if err != nil {
			t.Errorf("LoadSkill %s: %v", uri, err)
			continue
		}
		if n := p.sentCount(mcp.MethodResourcesRead) - reads; n != 1 {
			t.Errorf("LoadSkill %s sent %d resources/read, want 1 (the SKILL.md only)", uri, n)
		}
		if string(l.Content) != string(want.content["SKILL.md"]) || string(mustJSON(l.Frontmatter)) != string(mustJSON(want.frontmatter)) || len(l.Body) == 0 {
			t.Errorf("LoadSkill %s: content %q, frontmatter %s", uri, l.Content, mustJSON(l.Frontmatter))
		}
		for rel, b := range want.content {
			if rel == "SKILL.md" {
				continue
			}
			got, err := l.ReadFile(ctx, rel)
			if err != nil {
				t.Errorf("ReadFile %s %s: %v", uri, rel, err)
				continue
			}
			if string(got) != string(b) {
				t.Errorf("ReadFile %s %s: %q, want %q", uri, rel, got, b)
			}
		}
		reads = p.sentCount(mcp.MethodResourcesRead)
		_, err = l.ReadFile(ctx, "references/UNLISTED.md")
		if ve := (*mcp.SkillVerificationError)(nil); !errors.As(err, &ve) {
			t.Errorf("ReadFile of an unlisted file of %s: %v, want a *SkillVerificationError", uri, err)
		}
		if n := p.sentCount(mcp.MethodResourcesRead) - reads; n != 0 {
			t.Errorf("ReadFile of an unlisted file of %s sent %d resources/read", uri, n)
		}
	}
	// Asked directly, the server knows no such file. 2026-07-28 gives
	// -32602 for a resource not found; 2025-11-25 gives -32002, which the
	// TypeScript server does not: it answers -32602 in that era too.
	_, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://pdf-processing/references/UNLISTED.md"})
	if je := (*jsonrpc.Error)(nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/read of an unlisted file: %v, want JSON-RPC error %d (the TypeScript server's answer in both eras)", err, jsonrpc.CodeInvalidParams)
	}
}

// checkSkillsDirectories reads the directories of every skill (every
// page) when the server declares directoryRead, comparing their children
// with the fixture's, and a file, which the server refuses (-32602). A
// server without directoryRead is not asked: the client refuses with a
// *CapabilityError.
func checkSkillsDirectories(ctx context.Context, t *testing.T, p *skillsPeer, skills map[string]*fixtureSkill, dirs map[string]fixtureDir) {
	t.Helper()
	if p.flavour != "catalog" {
		for uri := range skills {
			dir := strings.TrimSuffix(uri, "/SKILL.md")
			_, err := p.cs.ReadDirectory(ctx, &mcp.ReadDirectoryParams{URI: dir})
			if ce := (*mcp.CapabilityError)(nil); !errors.As(err, &ce) {
				t.Errorf("ReadDirectory %s without directoryRead: %v, want a *CapabilityError", dir, err)
			}
		}
		if n := p.sentCount(mcp.MethodResourcesDirectoryRead); n != 0 {
			t.Errorf("the client sent %d resources/directory/read to a server without directoryRead", n)
		}
		return
	}
	for dir, want := range dirs {
		got := fixtureDir{}
		cursor, pages := "", 0
		for {
			res, err := p.cs.ReadDirectory(ctx, &mcp.ReadDirectoryParams{URI: dir, Cursor: cursor})
			if err != nil {
				t.Fatalf("resources/directory/read %s (page %d): %v", dir, pages+1, err)
			}
			pages++
			checkCacheHints(t, "resources/directory/read", p, res.TTLMs, res.CacheScope)
			for _, r := range res.Resources {
				if _, dup := got[r.URI]; dup {
					t.Errorf("%s: %s listed twice", dir, r.URI)
				}
				got[r.URI] = r.MIMEType == mcp.MIMETypeDirectory
				if !got[r.URI] && r.Size <= 0 {
					t.Errorf("%s: file %s without a size", dir, r.URI)
				}
			}
			if cursor = res.NextCursor; cursor == "" || pages > len(want) {
				break
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("resources/directory/read %s: %v, want %v (true: a directory)", dir, got, want)
		}
		if pages != len(want) {
			t.Errorf("resources/directory/read %s took %d pages, want %d (one per child)", dir, pages, len(want))
		}
	}
	_, err := p.cs.ReadDirectory(ctx, &mcp.ReadDirectoryParams{URI: "skill://pdf-processing/SKILL.md"})
	if je := (*jsonrpc.Error)(nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/directory/read of a file: %v, want JSON-RPC error %d", err, jsonrpc.CodeInvalidParams)
	}
}

// checkTamperedSkills reads the "tampered" server, whose skills/get
// entries carry another description than their SKILL.md and two of whose
// files differ from their entries; the listing is honest. The client must
// refuse each mismatch with a *SkillVerificationError: a frontmatter that
// differs from the entry's, a file longer than its size, a SKILL.md whose
// digest differs.
func checkTamperedSkills(ctx context.Context, t *testing.T, p *skillsPeer, skills map[string]*fixtureSkill) {
	t.Helper()
	const (
		pdf = "skill://pdf-processing/SKILL.md"
		csv = "skill://acme/data/csv-tools/SKILL.md"
	)
	listed := map[string]*mcp.Skill{}
	for s, err := range p.cs.Skills(ctx) {
		if err != nil {
			t.Fatalf("Skills: %v", err)
		}
		checkSkillEntry(t, "skills/list", s, skills)
		listed[s.URI] = s
	}
	if listed[pdf] == nil || listed[csv] == nil {
		t.Fatalf("listed %v, want %s and %s", slices.Sorted(maps.Keys(listed)), pdf, csv)
	}
	refused := func(what string, err error, reason string) {
		t.Helper()
		ve := (*mcp.SkillVerificationError)(nil)
		if !errors.As(err, &ve) || !strings.Contains(ve.Reason, reason) {
			t.Errorf("%s: %v, want a *SkillVerificationError saying %q", what, err, reason)
		}
	}
	got, err := p.cs.GetSkill(ctx, &mcp.GetSkillParams{URI: pdf})
	if err != nil {
		t.Fatalf("skills/get %s: %v", pdf, err)
	}
	_, err = p.cs.LoadSkill(ctx, got.Skill)
	refused("LoadSkill of the entry skills/get gave", err, `the frontmatter's "description" differs from the entry's`)

	l, err := p.cs.LoadSkill(ctx, listed[pdf])
	if err != nil {
		t.Fatalf("LoadSkill %s (listed, SKILL.md untouched): %v", pdf, err)
	}
	reads := p.sentCount(mcp.MethodResourcesRead)
	_, err = l.ReadFile(ctx, "references/FORMS.md")
	refused("ReadFile of a file a byte longer than its size", err, "the entry says")
	if n := p.sentCount(mcp.MethodResourcesRead) - reads; n != 1 {
		t.Errorf("ReadFile sent %d resources/read, want 1", n)
	}

	_, err = p.cs.LoadSkill(ctx, listed[csv])
	refused("LoadSkill of a SKILL.md with a byte changed", err, "digest differs")
}
