package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/frontmatter"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// skillSet is a server's skills (guarded by the Server's mutex).
type skillSet struct {
	byURI features[*Skill]                // entries by the URI of their SKILL.md
	dirs  map[string]*features[*Resource] // directory URI -> direct children by URI
	// What the skills registered, so that RemoveSkills removes only
	// that, not what replaced it since.
	files     map[string]*serverResource // AddSkills' file resources by URI
	templates map[string]*serverTemplate // AddSkill's templates by SKILL.md URI
}

// isSkillName reports whether name follows the Agent Skills rule for
// names: 1-64 characters of [a-z0-9-], no leading, trailing or
// consecutive hyphen. (Checks here are written out rather than regular
// expressions, which every program linking the package would compile at
// its start.)
func isSkillName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// isRegName reports whether s is a non-empty RFC 3986 reg-name: what the
// first segment of a skill path, the URI's authority, may hold
// (unreserved characters, sub-delims and percent-encodings).
func isRegName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~!$&'()*+,;=", c) >= 0:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// checkSkillName checks a skill's name against the Agent Skills rules.
func checkSkillName(name string) error {
	if !isSkillName(name) {
		return fmt.Errorf("skill name %q breaks the naming rules (1-64 characters of a-z, 0-9 and '-', no leading, trailing or consecutive '-')", name)
	}
	return nil
}

// skillFile is a file found under the root of AddSkills.
type skillFile struct {
	rel    string // path relative to the root
	size   int64
	digest string // set once hashed
}

// AddSkills serves the skills found under root in fsys (the Skills
// extension, SEP-2640): every directory holding a SKILL.md is a skill,
// nested ones included, and its files are served as resources
// skill://<skill-path>/<file-path>, where <skill-path> is the directory's
// path below root (the name of root itself when root holds a SKILL.md).
//
// Each SKILL.md must begin with YAML frontmatter holding at least name
// and description; the name must follow the Agent Skills rules (1-64
// characters of a-z, 0-9 and '-', no leading, trailing or consecutive
// hyphen) and equal the skill directory's name. A skill may hold at most
// [MaxSkillFiles] files and [MaxSkillSize] bytes, its nested skills'
// files included. Symbolic links are refused. Every file is hashed once,
// here; resources/read reads the file again from fsys when asked, so fsys
// should not change while it is served (a file whose size changed is
// refused, one changed otherwise fails the client's verification).
//
// The SKILL.md resource has MIME type text/markdown, the frontmatter's
// name and description, and the rest of the frontmatter in its _meta
// under [SkillsMetaPrefix]. The server then declares
// ServerCapabilities.Extensions[SkillsExtension] with directoryRead, and
// answers skills/list, skills/get and resources/directory/read.
//
// Errors name the file at fault; on error nothing is registered.
func (s *Server) AddSkills(fsys fs.FS, root string) error {
	if !fs.ValidPath(root) {
		return fmt.Errorf("mcp: AddSkills: invalid root %q (a slash-separated path within fsys, without . or .. elements)", root)
	}
	var files []*skillFile
	var skillDirs []string // relative to root; "." for root itself
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("mcp: AddSkills: %s: %w", p, err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("mcp: AddSkills: %s: a symbolic link (refused: it may lead out of the skill)", p)
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("mcp: AddSkills: %s: not a regular file", p)
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("mcp: AddSkills: %s: %w", p, err)
		}
		rel := relTo(root, p)
		files = append(files, &skillFile{rel: rel, size: info.Size()})
		if path.Base(rel) == "SKILL.md" {
			skillDirs = append(skillDirs, path.Dir(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(skillDirs) == 0 {
		return fmt.Errorf("mcp: AddSkills: no SKILL.md under %s", root)
	}
	// Files in subtree order, so that those under a directory are
	// consecutive (see filesUnder).
	slices.SortFunc(files, func(a, b *skillFile) int { return strings.Compare(subtreeKey(a.rel), subtreeKey(b.rel)) })
	// top prefixes every path when root itself is a skill: its skill
	// path is then root's name.
	top := ""
	if slices.Contains(skillDirs, ".") {
		if root == "." {
			return fmt.Errorf("mcp: AddSkills: %s: a skill at the root of fsys has no name to serve it under; pass its directory as root, or its parent", path.Join(root, "SKILL.md"))
		}
		top = path.Base(root) + "/"
	}
	uriOf := func(rel string) string {
		segs := strings.Split(top+rel, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		return "skill://" + strings.Join(segs, "/")
	}
	set := skillSet{dirs: map[string]*features[*Resource]{}}
	resources := map[string]*Resource{} // by URI, each file once
	handlers := map[string]ResourceHandler{}
	for _, dir := range skillDirs {
		skillMD := path.Join(root, dir, "SKILL.md")
		skillPath := strings.TrimSuffix(top+dir, "/.")
		if dir == "." {
			skillPath = strings.TrimSuffix(top, "/")
		}
		segs := strings.Split(skillPath, "/")
		if !isRegName(segs[0]) {
			return fmt.Errorf("mcp: AddSkills: %s: the skill path's first segment %q cannot be a URI authority (RFC 3986 reg-name)", skillMD, segs[0])
		}
		own := filesUnder(files, dir)
		var total int64
		for _, f := range own {
			total += f.size
		}
		if len(own) > MaxSkillFiles {
			return fmt.Errorf("mcp: AddSkills: %s: the skill has %d files, more than the limit of %d", skillMD, len(own), MaxSkillFiles)
		}
		if total > MaxSkillSize {
			return fmt.Errorf("mcp: AddSkills: %s: the skill's files hold %d bytes, more than the limit of %d", skillMD, total, MaxSkillSize)
		}
		src, err := fs.ReadFile(fsys, skillMD)
		if err != nil {
			return fmt.Errorf("mcp: AddSkills: %s: %w", skillMD, err)
		}
		fm, _, err := frontmatter.Parse(src)
		if err != nil {
			return fmt.Errorf("mcp: AddSkills: %s: %w", skillMD, err)
		}
		name, _ := fm["name"].(string)
		desc, _ := fm["description"].(string)
		switch {
		case name == "":
			return fmt.Errorf("mcp: AddSkills: %s: the frontmatter has no name", skillMD)
		case desc == "":
			return fmt.Errorf("mcp: AddSkills: %s: the frontmatter has no description", skillMD)
		}
		if err := checkSkillName(name); err != nil {
			return fmt.Errorf("mcp: AddSkills: %s: %w", skillMD, err)
		}
		if last := segs[len(segs)-1]; last != name {
			return fmt.Errorf("mcp: AddSkills: %s: the frontmatter name %q differs from the skill directory's name %q", skillMD, name, last)
		}
		entry := &Skill{URI: uriOf(path.Join(dir, "SKILL.md")), Frontmatter: fm, Resources: SkillResources{Files: make([]SkillResource, 0, len(own))}}
		for _, f := range own {
			if f.digest == "" {
				if f.digest, err = hashFile(fsys, path.Join(root, f.rel), f.size); err != nil {
					return err
				}
			}
			uri := uriOf(f.rel)
			entry.Resources.Files = append(entry.Resources.Files, SkillResource{URI: uri, Digest: f.digest, Size: f.size})
			if _, ok := resources[uri]; !ok {
				r := &Resource{URI: uri, Name: strings.TrimPrefix(f.rel, dir+"/"), MIMEType: mimeTypeOf(f.rel), Size: f.size}
				if f.rel == path.Join(dir, "SKILL.md") {
					r.Name, r.Description, r.MIMEType = name, desc, "text/markdown"
					r.Meta = skillMeta(fm)
				}
				resources[uri] = r
				handlers[uri] = skillFileHandler(fsys, path.Join(root, f.rel), f.size, r.MIMEType)
			}
			// The file's directories, up to the skill's, list it and
			// each other.
			child := f.rel
			for child != dir && child != "." {
				parent := path.Dir(child)
				puri := uriOf(parent)
				if parent == "." {
					puri = strings.TrimSuffix(uriOf("x"), "/x")
				}
				kids := set.dirs[puri]
				if kids == nil {
					kids = &features[*Resource]{}
					set.dirs[puri] = kids
				}
				curi := uriOf(child)
				if _, ok := kids.get(curi); !ok {
					if child == f.rel {
						kids.add(curi, resources[curi])
					} else {
						kids.add(curi, &Resource{URI: curi, Name: path.Base(child), MIMEType: MIMETypeDirectory})
					}
				}
				child = parent
			}
		}
		set.byURI.add(entry.URI, entry)
	}
	s.mu.Lock()
	if s.skills.files == nil {
		s.skills.files = map[string]*serverResource{}
	}
	for _, uri := range slices.Sorted(maps.Keys(resources)) {
		sr := &serverResource{resource: resources[uri], handler: handlers[uri]}
		replaced := s.resources.add(uri, sr)
		s.noteAddedLocked("resource", uri, replaced)
		s.skills.files[uri] = sr
	}
	for _, e := range set.byURI.all() {
		s.skills.byURI.add(e.URI, e)
	}
	if s.skills.dirs == nil {
		s.skills.dirs = map[string]*features[*Resource]{}
	}
	maps.Copy(s.skills.dirs, set.dirs)
	s.mu.Unlock()
	s.broadcast(NotificationResourceListChanged, &ResourceListChangedParams{}, nil)
	return nil
}

// AddSkill serves a skill whose files are not listed: its entry says
// "resources": "dynamic", and h reads every file of the skill (SKILL.md
// included), as the handler of the resource template
// <skill directory URI>/{+path}. entry.URI is the URI of its SKILL.md;
// the last path segment before SKILL.md must equal the name in
// entry.Frontmatter, which must also hold a description. Files of a
// dynamic skill cannot be verified by clients; prefer [Server.AddSkills].
func (s *Server) AddSkill(entry *Skill, h ResourceHandler) error {
	if entry == nil || h == nil {
		return errors.New("mcp: AddSkill needs an entry and a handler")
	}
	dir, ok := strings.CutSuffix(entry.URI, "/SKILL.md")
	_, after, scheme := strings.Cut(dir, "://")
	if !ok || !scheme || after == "" {
		return fmt.Errorf("mcp: AddSkill: %q is not the URI of a SKILL.md (<scheme>://<skill-path>/SKILL.md)", entry.URI)
	}
	name, _ := entry.Frontmatter["name"].(string)
	if desc, _ := entry.Frontmatter["description"].(string); name == "" || desc == "" {
		return fmt.Errorf("mcp: AddSkill: %s: the frontmatter needs a name and a description", entry.URI)
	}
	if err := checkSkillName(name); err != nil {
		return fmt.Errorf("mcp: AddSkill: %s: %w", entry.URI, err)
	}
	if last := dir[strings.LastIndexByte(dir, '/')+1:]; last != name {
		return fmt.Errorf("mcp: AddSkill: %s: the frontmatter name %q differs from the skill path's last segment %q", entry.URI, name, last)
	}
	e := &Skill{URI: entry.URI, Frontmatter: maps.Clone(entry.Frontmatter), Resources: SkillResources{Dynamic: true}}
	uriTemplate := dir + "/{+path}"
	if err := s.AddResourceTemplate(&ResourceTemplate{URITemplate: uriTemplate, Name: name, Description: e.Frontmatter["description"].(string)}, h); err != nil {
		return fmt.Errorf("mcp: AddSkill: %s: %w", entry.URI, err)
	}
	s.mu.Lock()
	s.skills.byURI.add(e.URI, e)
	if t, ok := s.templates.get(uriTemplate); ok {
		if s.skills.templates == nil {
			s.skills.templates = map[string]*serverTemplate{}
		}
		s.skills.templates[e.URI] = t
	}
	s.mu.Unlock()
	return nil
}

// RemoveSkills stops serving skills. Each name is a skill's name, which
// removes every skill of that name (skills at different paths may share
// one), or the URI of a skill's SKILL.md, which removes that skill only;
// names that match no skill are ignored. The resources that served a
// removed skill's files go too, except those a remaining skill lists (a
// nested skill's files are also its enclosing skill's), and so do its
// directories for resources/directory/read; a dynamic skill's resource
// template is removed. What has since been registered over a skill's
// resources or template (with [Server.AddResource], say) stays.
//
// When a skill goes, connected clients are told with
// notifications/resources/list_changed, even when no resource went (a
// nested skill's files stay its enclosing skill's): the Skills extension
// has no notification of its own, and that one is the cue to list skills
// again. A server left without skills no longer declares the extension,
// and answers its methods as a server without skills does.
func (s *Server) RemoveSkills(names ...string) {
	if len(names) == 0 {
		return
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	s.mu.Lock()
	var gone []*Skill
	for _, e := range s.skills.byURI.all() {
		if name, _ := e.Frontmatter["name"].(string); want[name] || want[e.URI] {
			gone = append(gone, e)
		}
	}
	if len(gone) == 0 {
		s.mu.Unlock()
		return
	}
	goneURIs := make([]string, len(gone))
	for i, e := range gone {
		goneURIs[i] = e.URI
	}
	s.skills.byURI.remove(goneURIs...)
	// What the remaining skills still need: everything within their
	// directories (a skill lists every file below its directory).
	keptDirs := map[string]bool{}
	for _, e := range s.skills.byURI.all() {
		if !e.Resources.Dynamic {
			keptDirs[strings.TrimSuffix(e.URI, "/SKILL.md")] = true
		}
	}
	var files, templates []string
	goneDirs := map[string]bool{}
	for _, e := range gone {
		if e.Resources.Dynamic {
			if t, ok := s.skills.templates[e.URI]; ok {
				delete(s.skills.templates, e.URI)
				if cur, found := s.templates.get(t.template.URITemplate); found && cur == t {
					templates = append(templates, t.template.URITemplate)
				}
			}
			continue
		}
		goneDirs[strings.TrimSuffix(e.URI, "/SKILL.md")] = true
		for _, f := range e.Resources.Files {
			owned, ok := s.skills.files[f.URI]
			if !ok || withinDirs(f.URI, keptDirs) {
				continue
			}
			delete(s.skills.files, f.URI)
			if cur, found := s.resources.get(f.URI); found && cur == owned {
				files = append(files, f.URI)
			}
		}
	}
	for d := range s.skills.dirs {
		if withinDirs(d, goneDirs) && !withinDirs(d, keptDirs) {
			delete(s.skills.dirs, d)
		}
	}
	s.resources.remove(files...)
	s.templates.remove(templates...)
	s.mu.Unlock()
	s.broadcast(NotificationResourceListChanged, &ResourceListChangedParams{}, nil)
}

// withinDirs reports whether the URI d is one of the directory URIs dirs
// or below one of them.
func withinDirs(d string, dirs map[string]bool) bool {
	_, rest, ok := strings.Cut(d, "://")
	if !ok {
		return dirs[d]
	}
	top := len(d) - len(rest) // the length of "<scheme>://"
	for p := d; len(p) > top; {
		if dirs[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < top {
			break
		}
		p = p[:i]
	}
	return false
}

// subtreeKey orders paths so that a directory's files are consecutive:
// "/" sorts before every other byte.
func subtreeKey(rel string) string { return strings.ReplaceAll(rel, "/", "\x00") }

// filesUnder returns the files below dir ("." for all), from files
// sorted by subtreeKey.
func filesUnder(files []*skillFile, dir string) []*skillFile {
	if dir == "." {
		return files
	}
	prefix := subtreeKey(dir) + "\x00"
	i, _ := slices.BinarySearchFunc(files, prefix, func(f *skillFile, p string) int { return strings.Compare(subtreeKey(f.rel), p) })
	j := i
	for j < len(files) && strings.HasPrefix(subtreeKey(files[j].rel), prefix) {
		j++
	}
	return files[i:j]
}

// relTo returns p relative to root ("." for root itself).
func relTo(root, p string) string {
	if root == "." {
		return p
	}
	if p == root {
		return "."
	}
	return strings.TrimPrefix(p, root+"/")
}

// hashFile returns the digest of the file at p, which must hold size
// bytes.
func hashFile(fsys fs.FS, p string, size int64) (string, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return "", fmt.Errorf("mcp: AddSkills: %s: %w", p, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, size+1))
	if err != nil {
		return "", fmt.Errorf("mcp: AddSkills: %s: %w", p, err)
	}
	if n != size {
		return "", fmt.Errorf("mcp: AddSkills: %s: the file changed while it was read (%d bytes, then %d)", p, size, n)
	}
	return skillDigest(h.Sum(nil)), nil
}

// skillDigest formats a SHA-256 sum as a manifest digest.
func skillDigest(sum []byte) string { return "sha256:" + hex.EncodeToString(sum) }

// mimeTypeOf guesses a skill file's media type from its name.
func mimeTypeOf(name string) string {
	ext := path.Ext(name)
	switch strings.ToLower(ext) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".txt", "":
		return "text/plain"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// skillMeta puts the frontmatter beyond name and description in _meta,
// under SkillsMetaPrefix.
func skillMeta(fm map[string]any) Meta {
	var m Meta
	for k, v := range fm {
		if k == "name" || k == "description" {
			continue
		}
		b, err := marshalStd(v)
		if err != nil {
			continue
		}
		if m.Other == nil {
			m.Other = map[string]json.RawMessage{}
		}
		m.Other[SkillsMetaPrefix+k] = b
	}
	return m
}

// skillFileHandler reads a skill file for resources/read.
func skillFileHandler(fsys fs.FS, p string, size int64, mimeType string) ResourceHandler {
	return func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		f, err := fsys.Open(p)
		if err != nil {
			return nil, fmt.Errorf("mcp: skill file %s: %w", p, err)
		}
		defer f.Close()
		var buf bytes.Buffer
		buf.Grow(int(size))
		if _, err := io.Copy(&buf, io.LimitReader(f, size+1)); err != nil {
			return nil, fmt.Errorf("mcp: skill file %s: %w", p, err)
		}
		if int64(buf.Len()) != size {
			return nil, fmt.Errorf("mcp: skill file %s changed since it was registered (%d bytes, now %d)", p, size, buf.Len())
		}
		c := &ResourceContents{URI: req.Params.URI, MIMEType: mimeType}
		if utf8.Valid(buf.Bytes()) {
			c.Text = buf.String()
		} else {
			c.Blob = buf.Bytes()
		}
		return &ReadResourceResult{Contents: []*ResourceContents{c}}, nil
	}
}

// skillsCapability adds the Skills extension to caps when the server has
// skills. s.mu is held.
func (s *Server) skillsCapability(caps *ServerCapabilities) {
	if s.skills.byURI.len() == 0 {
		return
	}
	if _, ok := caps.Extensions[SkillsExtension]; ok {
		return
	}
	settings := json.RawMessage(`{}`)
	if len(s.skills.dirs) > 0 {
		settings = json.RawMessage(`{"directoryRead":true}`)
	}
	ext := maps.Clone(caps.Extensions)
	if ext == nil {
		ext = map[string]json.RawMessage{}
	}
	ext[SkillsExtension] = settings
	caps.Extensions = ext
}

// declaresSkills reports whether the server answers skills/list and
// skills/get (directoryRead false) or resources/directory/read
// (directoryRead true). s.mu is held.
func (s *Server) declaresSkills(o *ServerCapabilities, directoryRead bool) bool {
	if raw, ok := o.Extensions[SkillsExtension]; ok {
		if !directoryRead {
			return true
		}
		var set SkillsSettings
		return json.Unmarshal(raw, &set) == nil && set.DirectoryRead
	}
	if directoryRead {
		return len(s.skills.dirs) > 0
	}
	return s.skills.byURI.len() > 0
}

func (ss *ServerSession) listSkills(_ context.Context, req *ServerRequest[*ListSkillsParams]) (*ListSkillsResult, error) {
	s := ss.server
	s.mu.RLock()
	items, next, err := s.skills.byURI.page(req.Params.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	return &ListSkillsResult{Skills: items, NextCursor: next}, nil
}

func (ss *ServerSession) getSkill(_ context.Context, req *ServerRequest[*GetSkillParams]) (*GetSkillResult, error) {
	s := ss.server
	s.mu.RLock()
	e, ok := s.skills.byURI.get(req.Params.URI)
	s.mu.RUnlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: no skill has the URI " + req.Params.URI}
	}
	return &GetSkillResult{Skill: e}, nil
}

func (ss *ServerSession) readDirectory(_ context.Context, req *ServerRequest[*ReadDirectoryParams]) (*ReadDirectoryResult, error) {
	s := ss.server
	s.mu.RLock()
	defer s.mu.RUnlock()
	kids, ok := s.skills.dirs[req.Params.URI]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: not a directory: " + req.Params.URI}
	}
	items, next, err := kids.page(req.Params.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return &ReadDirectoryResult{Resources: items, NextCursor: next}, nil
}
