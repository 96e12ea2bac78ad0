package mcp

// Protocol types of the Skills extension (io.modelcontextprotocol/skills,
// SEP-2640), served on every revision.

import (
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SkillsExtension is the identifier of the Skills extension: the key of
// its settings ([SkillsSettings]) in ServerCapabilities.Extensions.
const SkillsExtension = "io.modelcontextprotocol/skills"

// Methods of the Skills extension.
const (
	// MethodSkillsList lists the skills a server serves (paginated).
	MethodSkillsList = "skills/list"
	// MethodSkillsGet returns the entry of one skill, by the URI of its
	// SKILL.md.
	MethodSkillsGet = "skills/get"
	// MethodResourcesDirectoryRead lists the direct children of a
	// directory resource; a server serves it when it declares
	// SkillsSettings.DirectoryRead.
	MethodResourcesDirectoryRead = "resources/directory/read"
)

// MIMETypeDirectory is the media type of a directory resource, as
// resources/directory/read lists subdirectories.
const MIMETypeDirectory = "inode/directory"

// SkillsMetaPrefix is the prefix of the _meta keys the Skills extension
// uses, such as those that carry a SKILL.md's frontmatter beyond its name
// and description.
const SkillsMetaPrefix = "io.modelcontextprotocol.skills/"

// Limits of the Skills extension: a host accepts skills up to these, and
// a server serves none larger.
const (
	// MaxSkillFiles bounds the files of one skill, SKILL.md included.
	MaxSkillFiles = 512
	// MaxSkillSize bounds the total size of one skill's files, in bytes.
	MaxSkillSize = 16 << 20
)

// SkillsSettings are the settings of the Skills extension in a server's
// capabilities; the zero value ({}) declares no optional feature.
type SkillsSettings struct {
	// DirectoryRead declares that the server answers
	// resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitzero"`
}

// Skill is a skill's entry, as skills/list and skills/get return it.
type Skill struct {
	// URI is the URI of the skill's SKILL.md, normally
	// skill://<skill-path>/SKILL.md, whose last path segment before
	// SKILL.md is the skill's name. Required; with the server, it is the
	// skill's identity.
	URI string `json:"uri"`
	// Frontmatter is the YAML frontmatter of the SKILL.md, as a JSON
	// object; it holds at least name and description. Required.
	Frontmatter map[string]any `json:"frontmatter"`
	// Resources lists the skill's files, or says they are dynamic.
	// Required.
	Resources SkillResources `json:"resources"`
}

// SkillResources is the resources member of a [Skill]: the manifest of
// the skill's files or, when Dynamic is set, "dynamic": the files are not
// listed (and cannot be verified).
type SkillResources struct {
	// Files lists every file of the skill once, SKILL.md included.
	Files []SkillResource
	// Dynamic marks a skill whose files are not listed; Files is then
	// empty.
	Dynamic bool
}

// marshalJSONTo encodes the manifest for the wire: "dynamic" or the
// array of files.
func (r *SkillResources) marshalJSONTo(enc *jsontext.Encoder) error {
	if r.Dynamic {
		return enc.WriteToken(jsontext.String("dynamic"))
	}
	if r.Files == nil {
		return enc.WriteValue(jsontext.Value(`[]`))
	}
	return jsonv2.MarshalEncode(enc, r.Files)
}

// unmarshalJSONFrom decodes "dynamic" or an array of files.
func (r *SkillResources) unmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.String() != "dynamic" {
			return fmt.Errorf(`mcp: skill resources must be an array or "dynamic", not %q`, tok.String())
		}
		*r = SkillResources{Dynamic: true}
		return nil
	case '[':
		var files []SkillResource
		if err := jsonv2.UnmarshalDecode(dec, &files); err != nil {
			return err
		}
		if files == nil {
			files = []SkillResource{}
		}
		*r = SkillResources{Files: files}
		return nil
	}
	if _, err := dec.ReadValue(); err != nil {
		return err
	}
	return errors.New(`mcp: skill resources must be an array or "dynamic"`)
}

// SkillResource is one file of a skill's manifest.
type SkillResource struct {
	// URI is the file's resource URI, within the skill's directory.
	// Required.
	URI string `json:"uri"`
	// Digest is "sha256:" and the 64 lowercase hexadecimal digits of the
	// SHA-256 hash of the file's raw bytes. Required.
	Digest string `json:"digest"`
	// Size is the file's length in bytes. Required.
	Size int64 `json:"size"`
}

// ListSkillsParams are the params of skills/list.
type ListSkillsParams struct {
	// Meta is the request's _meta member (see [Meta]). Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the NextCursor of the previous page. Optional.
	Cursor string `json:"cursor,omitzero"`
}

// ListSkillsResult is one page of skills. An entry is never split
// across pages.
type ListSkillsResult struct {
	// Meta is the result's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28 (see
	// ListToolsResult.ResultType). Servers set it.
	ResultType ResultType `json:"resultType,omitzero"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result, from 2026-07-28. Servers fill it in on that revision.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy of the result, from
	// 2026-07-28. Servers fill it in on that revision.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Skills holds this page's entries. Required; may be empty.
	Skills []*Skill `json:"skills"`
	// NextCursor, when not empty, gets the next page. Optional.
	NextCursor string `json:"nextCursor,omitzero"`
}

// GetSkillParams are the params of skills/get.
type GetSkillParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI is the URI of the skill's SKILL.md. Required.
	URI string `json:"uri"`
}

// GetSkillResult is the answer to skills/get.
type GetSkillResult struct {
	// Meta is the result's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28.
	ResultType ResultType `json:"resultType,omitzero"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result, from 2026-07-28.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy, from 2026-07-28.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Skill is the skill's entry. Required.
	Skill *Skill `json:"skill"`
}

// ReadDirectoryParams are the params of resources/directory/read.
type ReadDirectoryParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// URI is the directory's URI, without a trailing slash. Required.
	URI string `json:"uri"`
	// Cursor is the NextCursor of the previous page. Optional.
	Cursor string `json:"cursor,omitzero"`
}

// ReadDirectoryResult is one page of a directory's direct children.
type ReadDirectoryResult struct {
	// Meta is the result's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType says how to read the result, from 2026-07-28.
	ResultType ResultType `json:"resultType,omitzero"`
	// TTLMs is how long, in milliseconds, the client may cache the
	// result, from 2026-07-28.
	TTLMs *int64 `json:"ttlMs,omitzero"`
	// CacheScope says who may share a cached copy, from 2026-07-28.
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	// Resources are the children: files, and subdirectories with
	// MIMEType [MIMETypeDirectory]. Required; may be empty.
	Resources []*Resource `json:"resources"`
	// NextCursor, when not empty, gets the next page. Optional.
	NextCursor string `json:"nextCursor,omitzero"`
}

func (p *ListSkillsParams) meta() *Meta    { return &p.Meta }
func (p *GetSkillParams) meta() *Meta      { return &p.Meta }
func (p *ReadDirectoryParams) meta() *Meta { return &p.Meta }

func (r *ListSkillsResult) resultMeta() *Meta    { return &r.Meta }
func (r *GetSkillResult) resultMeta() *Meta      { return &r.Meta }
func (r *ReadDirectoryResult) resultMeta() *Meta { return &r.Meta }

func (r *ListSkillsResult) resultType() *ResultType    { return &r.ResultType }
func (r *GetSkillResult) resultType() *ResultType      { return &r.ResultType }
func (r *ReadDirectoryResult) resultType() *ResultType { return &r.ResultType }

func (r *ListSkillsResult) cacheHints() (**int64, *CacheScope)    { return &r.TTLMs, &r.CacheScope }
func (r *GetSkillResult) cacheHints() (**int64, *CacheScope)      { return &r.TTLMs, &r.CacheScope }
func (r *ReadDirectoryResult) cacheHints() (**int64, *CacheScope) { return &r.TTLMs, &r.CacheScope }
