package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io/fs"
	"iter"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/frontmatter"
)

// SkillVerificationError is a skill, or one of its files, that failed a
// client's checks: an entry that breaks the extension's rules (a
// malformed digest or size, a file outside the skill, past the limits),
// a file not in the entry, content whose length or digest differs from
// the entry's, or a SKILL.md whose frontmatter differs from the entry's.
// Content that fails is not returned.
type SkillVerificationError struct {
	// URI is the skill's or the file's URI.
	URI string
	// Reason says what failed.
	Reason string
	// Err is the underlying error, if any (such as a frontmatter the
	// client could not read).
	Err error
}

// Error implements error.
func (e *SkillVerificationError) Error() string {
	msg := "mcp: skill verification failed: " + e.URI + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error, if any.
func (e *SkillVerificationError) Unwrap() error { return e.Err }

// skillsSettings returns the server's Skills settings, and whether it
// declares the extension.
func (cs *ClientSession) skillsSettings() (SkillsSettings, bool) {
	var set SkillsSettings
	raw, ok := cs.serverCaps().Extensions[SkillsExtension]
	if !ok {
		return set, false
	}
	_ = unmarshalStd(raw, &set) // a malformed value declares no optional feature
	return set, true
}

// ListSkills returns one page of the server's skills. params may be nil.
// It fails with a *CapabilityError when the server does not declare the
// Skills extension.
func (cs *ClientSession) ListSkills(ctx context.Context, params *ListSkillsParams) (*ListSkillsResult, error) {
	_, ok := cs.skillsSettings()
	if err := cs.checkServer(MethodSkillsList, "extensions."+SkillsExtension, ok); err != nil {
		return nil, err
	}
	if params == nil {
		params = &ListSkillsParams{}
	}
	res := &ListSkillsResult{}
	if err := cs.request(ctx, MethodSkillsList, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// Skills iterates over every skill the server lists, fetching pages as
// needed. The iteration stops at the first error, which it yields. It
// reads no skill file (see [ClientSession.LoadSkill]).
func (cs *ClientSession) Skills(ctx context.Context) iter.Seq2[*Skill, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*Skill, string, error) {
		res, err := cs.ListSkills(ctx, &ListSkillsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Skills, res.NextCursor, nil
	})
}

// GetSkill returns the entry of one skill, listed or not, by the URI of
// its SKILL.md. A server that serves no such skill answers -32602.
func (cs *ClientSession) GetSkill(ctx context.Context, params *GetSkillParams) (*GetSkillResult, error) {
	_, ok := cs.skillsSettings()
	if err := cs.checkServer(MethodSkillsGet, "extensions."+SkillsExtension, ok); err != nil {
		return nil, err
	}
	res := &GetSkillResult{}
	if err := cs.request(ctx, MethodSkillsGet, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ReadDirectory returns one page of a directory resource's direct
// children. It is refused with a *CapabilityError, without asking, when
// the server does not declare the Skills extension with directoryRead.
func (cs *ClientSession) ReadDirectory(ctx context.Context, params *ReadDirectoryParams) (*ReadDirectoryResult, error) {
	set, _ := cs.skillsSettings()
	if err := cs.checkServer(MethodResourcesDirectoryRead, "extensions."+SkillsExtension+".directoryRead", set.DirectoryRead); err != nil {
		return nil, err
	}
	res := &ReadDirectoryResult{}
	if err := cs.request(ctx, MethodResourcesDirectoryRead, params, res); err != nil {
		return nil, err
	}
	return res, nil
}

// LoadedSkill is a skill whose SKILL.md a client has read and verified
// against the skill's entry (see [ClientSession.LoadSkill]). Its other
// files are read, and verified, only when asked for, with ReadFile. A
// LoadedSkill belongs to the session that loaded it: a skill's identity
// is its server and URI, never its name alone.
type LoadedSkill struct {
	// Entry is the entry the skill was loaded from (a copy).
	Entry *Skill
	// Content is the SKILL.md, verified.
	Content []byte
	// Frontmatter is the SKILL.md's frontmatter, equal to the entry's.
	Frontmatter map[string]any
	// Body is the SKILL.md after its frontmatter.
	Body []byte

	cs  *ClientSession
	dir string // the skill directory's URI
}

// skillDigestFormat reports whether d is "sha256:" and 64 lowercase
// hexadecimal digits.
func skillDigestFormat(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for i := range len(h) {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkSkillEntry checks an entry against the extension's rules and
// returns the skill directory's URI.
func checkSkillEntry(e *Skill) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", &SkillVerificationError{URI: e.URI, Reason: "bad entry: " + fmt.Sprintf(format, args...)}
	}
	dir, ok := strings.CutSuffix(e.URI, "/SKILL.md")
	_, after, scheme := strings.Cut(dir, "://")
	if !ok || !scheme || after == "" {
		return fail("the uri is not that of a SKILL.md")
	}
	name, _ := e.Frontmatter["name"].(string)
	if desc, _ := e.Frontmatter["description"].(string); name == "" || desc == "" {
		return fail("the frontmatter lacks a name or a description")
	}
	if last := dir[strings.LastIndexByte(dir, '/')+1:]; last != name {
		return fail("the skill path ends in %q, not in its name %q", last, name)
	}
	if err := checkSkillName(name); err != nil {
		return fail("%v", err)
	}
	if e.Resources.Dynamic {
		return dir, nil
	}
	files := e.Resources.Files
	if len(files) > MaxSkillFiles {
		return fail("%d files, more than the limit of %d", len(files), MaxSkillFiles)
	}
	var total int64
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		switch {
		case !skillDigestFormat(f.Digest):
			return fail("file %s: malformed digest %q", f.URI, f.Digest)
		case f.Size < 0 || f.Size > MaxSkillSize:
			return fail("file %s: bad size %d", f.URI, f.Size)
		case f.URI != e.URI && !withinSkill(dir, f.URI):
			return fail("file %s is outside the skill", f.URI)
		case seen[f.URI]:
			return fail("file %s is listed twice", f.URI)
		}
		seen[f.URI] = true
		total += f.Size
	}
	if total > MaxSkillSize {
		return fail("the files hold %d bytes, more than the limit of %d", total, MaxSkillSize)
	}
	if !seen[e.URI] {
		return fail("the resources do not list the SKILL.md")
	}
	return dir, nil
}

// withinSkill reports whether uri names a file below the directory dir,
// without dot segments that would lead out of it.
func withinSkill(dir, uri string) bool {
	rel, ok := strings.CutPrefix(uri, dir+"/")
	return ok && rel != "" && validRel(rel)
}

// validRel reports whether rel is a relative path without empty, "." or
// ".." segments.
func validRel(rel string) bool {
	return fs.ValidPath(rel) && rel != "." && !strings.Contains(rel, `\`) && !strings.Contains(strings.ToLower(rel), "%2e")
}

// LoadSkill loads a skill from its entry (from [ClientSession.Skills] or
// [ClientSession.GetSkill]): it checks the entry against the extension's
// rules and limits, reads the SKILL.md (and nothing else), checks its
// length against the entry's size before it hashes it, then its digest,
// then compares its frontmatter with the entry's field by field. Any
// failure is a *SkillVerificationError, and the content is not returned.
// For a "dynamic" skill, which lists no digests, only the frontmatter is
// compared.
func (cs *ClientSession) LoadSkill(ctx context.Context, entry *Skill) (*LoadedSkill, error) {
	dir, err := checkSkillEntry(entry)
	if err != nil {
		return nil, err
	}
	e := &Skill{URI: entry.URI, Frontmatter: entry.Frontmatter, Resources: SkillResources{Dynamic: entry.Resources.Dynamic, Files: slices.Clone(entry.Resources.Files)}}
	l := &LoadedSkill{Entry: e, cs: cs, dir: dir}
	content, err := l.read(ctx, e.URI)
	if err != nil {
		return nil, err
	}
	fm, body, err := frontmatter.Parse(content)
	if err != nil {
		return nil, &SkillVerificationError{URI: e.URI, Reason: "unreadable frontmatter", Err: err}
	}
	if field, ok := sameFrontmatter(fm, e.Frontmatter); !ok {
		return nil, &SkillVerificationError{URI: e.URI, Reason: fmt.Sprintf("the frontmatter's %q differs from the entry's", field)}
	}
	l.Content, l.Frontmatter, l.Body = content, fm, body
	return l, nil
}

// sameFrontmatter compares a file's frontmatter with an entry's, field by
// field, as JSON values; it returns the first field that differs.
func sameFrontmatter(file, entry map[string]any) (string, bool) {
	var a, b map[string]any
	if err := normalizeJSON(file, &a); err != nil {
		return "", false
	}
	if err := normalizeJSON(entry, &b); err != nil {
		return "", false
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			return k, false
		}
	}
	return "", true
}

// normalizeJSON decodes the JSON encoding of v into out.
func normalizeJSON(v any, out any) error {
	b, err := marshalStd(v)
	if err != nil {
		return err
	}
	return unmarshalStd(b, out)
}

// ReadFile reads a file of the skill, by its path relative to the skill's
// directory (such as "references/FORMS.md"), and verifies it against the
// entry: a file the entry does not list is refused without asking the
// server, and the content's length, then its digest, must equal the
// entry's. For a "dynamic" skill, any path within the skill's directory
// is read, unverified.
func (l *LoadedSkill) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	uri := l.dir + "/" + rel
	if !validRel(rel) {
		return nil, &SkillVerificationError{URI: uri, Reason: "not a path within the skill"}
	}
	if !l.Entry.Resources.Dynamic && !l.lists(uri) {
		// The path as a URI path: its segments escaped.
		segs := strings.Split(rel, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		if escaped := l.dir + "/" + strings.Join(segs, "/"); l.lists(escaped) {
			uri = escaped
		}
	}
	return l.read(ctx, uri)
}

// lists reports whether the skill's entry lists uri.
func (l *LoadedSkill) lists(uri string) bool {
	return slices.ContainsFunc(l.Entry.Resources.Files, func(f SkillResource) bool { return f.URI == uri })
}

// read reads a file of the skill and verifies it.
func (l *LoadedSkill) read(ctx context.Context, uri string) ([]byte, error) {
	var want *SkillResource
	if !l.Entry.Resources.Dynamic {
		i := slices.IndexFunc(l.Entry.Resources.Files, func(f SkillResource) bool { return f.URI == uri })
		if i < 0 {
			return nil, &SkillVerificationError{URI: uri, Reason: "the skill's entry does not list this file"}
		}
		want = &l.Entry.Resources.Files[i]
	}
	res, err := l.cs.ReadResource(ctx, &ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	var content []byte
	found := false
	for _, c := range res.Contents {
		if c != nil && (c.URI == uri || len(res.Contents) == 1) {
			if c.Blob != nil {
				content = c.Blob
			} else {
				content = []byte(c.Text)
			}
			found = true
			break
		}
	}
	if !found {
		return nil, &SkillVerificationError{URI: uri, Reason: "the server returned no content for the file"}
	}
	if want == nil {
		return content, nil
	}
	if err := verifySkillFile(content, want); err != nil {
		return nil, err
	}
	return content, nil
}

// verifySkillFile checks content against its manifest entry: its length
// first, then (only if the length is right) its digest.
func verifySkillFile(content []byte, want *SkillResource) error {
	if int64(len(content)) != want.Size {
		return &SkillVerificationError{URI: want.URI, Reason: fmt.Sprintf("%d bytes, the entry says %d", len(content), want.Size)}
	}
	sum := sha256.Sum256(content)
	var wantSum [sha256.Size]byte
	if _, err := hex.Decode(wantSum[:], []byte(want.Digest[len("sha256:"):])); err != nil || subtle.ConstantTimeCompare(sum[:], wantSum[:]) != 1 {
		return &SkillVerificationError{URI: want.URI, Reason: "the content's digest differs from the entry's"}
	}
	return nil
}
