// Package frontmatter reads the YAML frontmatter of an Agent Skills
// SKILL.md file: the block between a first line "---" and the next line
// "---", as a JSON-compatible value.
//
// It reads the subset of YAML such files use: block mappings and
// sequences nested by indentation, plain, single-quoted and double-quoted
// scalars (a plain scalar may continue on more indented lines), literal
// (|) and folded (>) block scalars with their chomping indicators, flow
// sequences of scalars, empty flow collections, and comments. Scalars
// resolve as YAML 1.2's core schema does: null, booleans, numbers (as
// float64, as encoding/json decodes them) and strings. Everything else
// (anchors, aliases, tags, directives, complex keys, multi-line quoted
// scalars, nested flow collections, tabs in indentation, duplicate keys)
// is refused with an [*Error] naming the line, rather than read some
// other way than a YAML parser would.
//
// Reading is bounded: the frontmatter block may hold at most [MaxSize]
// bytes and nest at most [MaxDepth] collections.
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of what Parse reads.
const (
	// MaxSize bounds the frontmatter block, in bytes.
	MaxSize = 64 << 10
	// MaxDepth bounds the nesting of mappings and sequences.
	MaxDepth = 32
)

// ErrNoFrontmatter is the error (wrapped in an [*Error]) of a file that
// does not begin with a "---" line, or whose block is never closed.
var ErrNoFrontmatter = errors.New("no frontmatter: the file must begin with a line \"---\" and the block end with another")

// ErrTooLarge is the error (wrapped in an [*Error]) of a frontmatter
// block larger than [MaxSize] or nested deeper than [MaxDepth].
var ErrTooLarge = errors.New("frontmatter too large")

// Error is a frontmatter that could not be read: Line is the 1-based line
// of the file at fault (0 when the fault is the file as a whole).
type Error struct {
	// Line is the 1-based line of the file at fault, or 0.
	Line int
	// Msg says what is wrong.
	Msg string
	// Err is ErrNoFrontmatter, ErrTooLarge, or nil.
	Err error
}

// Error implements error: "line N: " and the message.
func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, msg)
	}
	return msg
}

// Unwrap returns the error's cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Parse reads the frontmatter of src, a SKILL.md file. It returns the
// frontmatter's top-level mapping (empty when the block is) and the body
// after the block.
func Parse(src []byte) (map[string]any, []byte, error) {
	src = bytes.TrimPrefix(src, []byte("\uFEFF"))
	first, rest, ok := cutLine(src)
	if !ok || strings.TrimRight(string(first), " \t\r") != "---" {
		return nil, nil, &Error{Err: ErrNoFrontmatter}
	}
	var lines []string
	end := -1
	for off := 0; off < len(rest); {
		l, after, ok := cutLine(rest[off:])
		next := len(rest)
		if ok {
			next = len(rest) - len(after)
		}
		text := strings.TrimSuffix(string(l), "\r")
		if t := strings.TrimRight(text, " \t"); t == "---" || t == "..." {
			end = next
			break
		}
		if next > MaxSize {
			return nil, nil, &Error{Err: ErrTooLarge, Msg: fmt.Sprintf("frontmatter too large: more than %d bytes", MaxSize)}
		}
		lines = append(lines, text)
		off = next
	}
	if end < 0 {
		return nil, nil, &Error{Err: ErrNoFrontmatter}
	}
	p := &parser{lines: lines, base: 2}
	for i, l := range lines {
		if !utf8.ValidString(l) {
			return nil, nil, p.errAt(i, "invalid UTF-8")
		}
		if lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(lead, "\t") && strings.TrimSpace(l) != "" {
			return nil, nil, p.errAt(i, "tab in indentation")
		}
	}
	p.skipBlank()
	if p.i >= len(p.lines) {
		return map[string]any{}, rest[end:], nil
	}
	ind := indentOf(p.lines[p.i])
	if ind != 0 {
		return nil, nil, p.errAt(p.i, "the top level must not be indented")
	}
	v, err := p.block(0, 0)
	if err != nil {
		return nil, nil, err
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, nil, p.errAt(p.i, "unexpected indentation")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, &Error{Line: 2, Msg: "the frontmatter must be a mapping"}
	}
	return m, rest[end:], nil
}

// cutLine splits b after its first line, without the newline.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

type parser struct {
	lines []string
	i     int // current line
	base  int // file line number of lines[0]
}

func (p *parser) errAt(i int, format string, args ...any) error {
	return &Error{Line: p.base + i, Msg: fmt.Sprintf(format, args...)}
}

// blank reports whether a line holds nothing but space and a comment.
func blank(l string) bool {
	t := strings.TrimLeft(l, " ")
	return t == "" || t[0] == '#'
}

func (p *parser) skipBlank() {
	for p.i < len(p.lines) && blank(p.lines[p.i]) {
		p.i++
	}
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// block reads the collection starting at the current line, whose
// indentation is ind.
func (p *parser) block(ind, depth int) (any, error) {
	l := p.lines[p.i]
	if strings.HasPrefix(l[ind:], "\t") || strings.HasPrefix(strings.TrimLeft(l, " "), "\t") {
		return nil, p.errAt(p.i, "tab in indentation")
	}
	t := l[ind:]
	if t == "-" || strings.HasPrefix(t, "- ") {
		return p.sequence(ind, depth)
	}
	return p.mapping(ind, depth)
}

// next skips blank lines and returns the text after the indentation of
// the next line of a collection indented by ind, or false at the end of
// the input or of the collection (a line indented less). A line indented
// more is an error.
func (p *parser) next(ind int) (string, bool, error) {
	p.skipBlank()
	if p.i >= len(p.lines) {
		return "", false, nil
	}
	l := p.lines[p.i]
	switch li := indentOf(l); {
	case li < ind:
		return "", false, nil
	case li > ind:
		return "", false, p.errAt(p.i, "unexpected indentation")
	}
	return l[ind:], true, nil
}

// tooDeep is the error of a collection nested deeper than MaxDepth.
func (p *parser) tooDeep() error {
	return &Error{Line: p.base + p.i, Err: ErrTooLarge, Msg: fmt.Sprintf("nested deeper than %d", MaxDepth)}
}

func (p *parser) sequence(ind, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, p.tooDeep()
	}
	out := []any{}
	for {
		t, ok, err := p.next(ind)
		if err != nil {
			return nil, err
		}
		if !ok || t != "-" && !strings.HasPrefix(t, "- ") {
			return out, nil
		}
		rest := strings.TrimLeft(t[1:], " ")
		if rest == "" || rest[0] == '#' {
			p.i++
			v, err := p.nested(ind, depth, true)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		itemInd := ind + (len(t) - len(rest))
		if _, _, isMap, err := splitKey(rest); err == nil && isMap {
			// "- key: value": a mapping whose keys sit at itemInd.
			p.lines[p.i] = strings.Repeat(" ", itemInd) + rest
			v, err := p.mapping(itemInd, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		if rest == "-" || strings.HasPrefix(rest, "- ") {
			p.lines[p.i] = strings.Repeat(" ", itemInd) + rest
			v, err := p.sequence(itemInd, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		v, err := p.value(rest, ind, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

func (p *parser) mapping(ind, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, p.tooDeep()
	}
	out := map[string]any{}
	for {
		t, ok, err := p.next(ind)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		if t == "-" || strings.HasPrefix(t, "- ") {
			if ind == 0 && len(out) == 0 {
				return nil, p.errAt(p.i, "the frontmatter must be a mapping")
			}
			return out, nil
		}
		key, rest, isMap, err := splitKey(t)
		if err != nil {
			return nil, p.errAt(p.i, "%v", err)
		}
		if !isMap {
			return nil, p.errAt(p.i, "expected \"key: value\"")
		}
		if _, dup := out[key]; dup {
			return nil, p.errAt(p.i, "duplicate key %q", key)
		}
		if rest == "" || rest[0] == '#' {
			p.i++
			v, err := p.nested(ind, depth, false)
			if err != nil {
				return nil, err
			}
			out[key] = v
			continue
		}
		v, err := p.value(rest, ind, depth)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
}

// nested reads the value of a key or sequence item whose line ended
// after the indicator: a more indented block, a sequence at the same
// indentation (for a key), or null.
func (p *parser) nested(ind, depth int, inSeq bool) (any, error) {
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, nil
	}
	l := p.lines[p.i]
	li := indentOf(l)
	t := l[li:]
	isSeq := t == "-" || strings.HasPrefix(t, "- ")
	if li > ind || (li == ind && isSeq && !inSeq) {
		return p.block(li, depth+1)
	}
	return nil, nil
}

// value reads the scalar (or flow collection, or block scalar header)
// that follows an indicator on the current line; ind is the indentation
// of the entry it belongs to.
func (p *parser) value(s string, ind, depth int) (any, error) {
	line := p.i
	switch s[0] {
	case '&', '*', '!', '%', '@', '`', '?':
		return nil, p.errAt(line, "unsupported YAML: %q", s[:1])
	case '|', '>':
		return p.blockScalar(s, ind)
	case '"', '\'':
		quoted := doubleQuoted
		if s[0] == '\'' {
			quoted = singleQuoted
		}
		v, rest, err := quoted(s)
		if err == nil {
			err = trailing(rest)
		}
		if err != nil {
			return nil, p.errAt(line, "%v", err)
		}
		p.i++
		return v, nil
	case '[', '{':
		v, err := flow(s)
		if err != nil {
			return nil, p.errAt(line, "%v", err)
		}
		p.i++
		return v, nil
	}
	// A plain scalar, perhaps continued on more indented lines.
	parts := []string{stripComment(s)}
	p.i++
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if strings.TrimSpace(l) == "" {
			// A blank line inside a plain scalar is a line break.
			j := p.i
			for j < len(p.lines) && strings.TrimSpace(p.lines[j]) == "" {
				j++
			}
			if j < len(p.lines) && indentOf(p.lines[j]) > ind && !blank(p.lines[j]) {
				for k := p.i; k < j; k++ {
					parts = append(parts, "\n")
				}
				p.i = j
				continue
			}
			break
		}
		if indentOf(l) <= ind || blank(l) {
			break
		}
		t := strings.TrimSpace(l)
		if strings.Contains(t, ": ") || strings.HasSuffix(t, ":") {
			return nil, p.errAt(p.i, "a mapping inside a plain scalar")
		}
		parts = append(parts, stripComment(t))
		p.i++
	}
	if len(parts) == 1 {
		return resolve(parts[0], line, p)
	}
	var b strings.Builder
	for i, s := range parts {
		switch {
		case s == "\n":
			b.WriteByte('\n')
		case i > 0 && parts[i-1] != "\n":
			b.WriteByte(' ')
			b.WriteString(s)
		default:
			b.WriteString(s)
		}
	}
	return b.String(), nil
}

// trailing checks what follows a quoted scalar: nothing but a comment.
func trailing(rest string) error {
	rest = strings.TrimLeft(rest, " ")
	if rest != "" && rest[0] != '#' {
		return errors.New("text after a quoted scalar")
	}
	return nil
}

// stripComment removes a " #" comment and trailing space from a plain
// scalar.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ")
}

// isNumber reports whether s is a YAML 1.2 core-schema integer or float
// in decimal notation: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
// (an integer is the case without a point or exponent). It is written out,
// not a regular expression, so that no program pays at its start for
// compiling one it may never use.
func isNumber(s string) bool {
	digits := func(i int) int { // the index after the digits at i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	j := digits(i)
	whole := j > i
	i = j
	if i < len(s) && s[i] == '.' {
		j = digits(i + 1)
		if !whole && j == i+1 {
			return false // "." or "-." with no digits
		}
		i = j
	} else if !whole {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		j = digits(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

// resolve gives a plain scalar its type, as YAML 1.2's core schema does.
func resolve(s string, line int, p *parser) (any, error) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	if strings.ContainsAny(s[:1], "&*!%@`|>\"'[]{},") || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, ": ") {
		return nil, p.errAt(line, "unsupported YAML: plain scalar %q", s)
	}
	if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return nil, p.errAt(line, "unsupported YAML: %q (quote the value)", s)
	}
	low := strings.ToLower(strings.TrimLeft(s, "+-"))
	switch {
	case low == ".inf" || low == ".nan":
		return nil, p.errAt(line, "%s has no JSON value", s)
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0o"):
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return nil, p.errAt(line, "bad number %q", s)
		}
		return float64(n), nil
	case isNumber(s):
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, p.errAt(line, "number %q out of range", s)
		}
		return f, nil
	}
	return s, nil
}

// splitKey splits "key: rest" (or "key:"), reporting whether t is a
// mapping entry at all.
func splitKey(t string) (key, rest string, isMap bool, err error) {
	if t == "" {
		return "", "", false, nil
	}
	switch t[0] {
	case '"', '\'':
		var k string
		var after string
		if t[0] == '"' {
			k, after, err = doubleQuoted(t)
		} else {
			k, after, err = singleQuoted(t)
		}
		if err != nil {
			return "", "", false, err
		}
		if after == ":" {
			return k, "", true, nil
		}
		if strings.HasPrefix(after, ": ") {
			return k, strings.TrimLeft(after[2:], " "), true, nil
		}
		return "", "", false, nil
	case '?', '&', '*', '!', '%', '@', '`', '[', '{', '|', '>', '#':
		return "", "", false, nil
	}
	i := strings.Index(t, ": ")
	if strings.HasSuffix(t, ":") && (i < 0 || i == len(t)-1) {
		i = len(t) - 1
	}
	if i <= 0 {
		return "", "", false, nil
	}
	key = strings.TrimRight(t[:i], " ")
	if strings.Contains(key, " #") {
		return "", "", false, nil
	}
	rest = ""
	if i+1 < len(t) {
		rest = strings.TrimLeft(t[i+1:], " ")
	}
	return key, rest, true, nil
}

// doubleQuoted reads a double-quoted scalar at the start of s (on one
// line) and returns it and what follows.
func doubleQuoted(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i >= len(s) {
				return "", "", errors.New("unsupported YAML: a double-quoted scalar continued on the next line")
			}
			switch s[i] {
			case '0':
				b.WriteByte(0)
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't', '\t':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case ' ', '"', '/', '\\':
				b.WriteByte(s[i])
			case 'N':
				b.WriteString("\u0085")
			case '_':
				b.WriteString("\u00a0")
			case 'L':
				b.WriteString("\u2028")
			case 'P':
				b.WriteString("\u2029")
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
				if i+n >= len(s) {
					return "", "", errors.New("short escape in a double-quoted scalar")
				}
				r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", "", fmt.Errorf("bad escape \\%s", s[i:i+1+n])
				}
				b.WriteRune(rune(r))
				i += n
			default:
				return "", "", fmt.Errorf("bad escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unsupported YAML: a double-quoted scalar continued on the next line")
}

// singleQuoted reads a single-quoted scalar at the start of s.
func singleQuoted(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], nil
		}
		b.WriteByte(s[i])
	}
	return "", "", errors.New("unsupported YAML: a single-quoted scalar continued on the next line")
}

// flow reads a flow sequence of scalars, or an empty flow mapping.
func flow(s string) (any, error) {
	s = stripComment(s)
	if s[0] == '{' {
		if strings.TrimSpace(s[1:]) == "}" {
			return map[string]any{}, nil
		}
		return nil, errors.New("unsupported YAML: a flow mapping")
	}
	if !strings.HasSuffix(s, "]") {
		return nil, errors.New("unsupported YAML: a flow sequence continued on the next line")
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	out := []any{}
	for inner != "" {
		var item any
		switch inner[0] {
		case '[', '{', '&', '*', '!':
			return nil, errors.New("unsupported YAML: nested flow collections")
		case '"', '\'':
			var v, rest string
			var err error
			if inner[0] == '"' {
				v, rest, err = doubleQuoted(inner)
			} else {
				v, rest, err = singleQuoted(inner)
			}
			if err != nil {
				return nil, err
			}
			item = v
			inner = strings.TrimLeft(rest, " ")
		default:
			i := strings.IndexByte(inner, ',')
			if i < 0 {
				i = len(inner)
			}
			tok := strings.TrimSpace(inner[:i])
			if strings.ContainsAny(tok, ":#") {
				return nil, errors.New("unsupported YAML: a flow sequence item with ':' or '#'")
			}
			var err error
			if item, err = resolve(tok, 0, &parser{}); err != nil {
				return nil, err
			}
			inner = inner[i:]
		}
		out = append(out, item)
		if inner == "" {
			break
		}
		if inner[0] != ',' {
			return nil, errors.New("bad flow sequence")
		}
		inner = strings.TrimLeft(inner[1:], " ")
		if inner == "" {
			break // a trailing comma
		}
	}
	return out, nil
}

// blockScalar reads a literal (|) or folded (>) block scalar whose header
// h is on the current line; ind is the indentation of its entry.
func (p *parser) blockScalar(h string, ind int) (any, error) {
	line := p.i
	hdr := stripComment(h)
	style, chomp, explicit := hdr[0], byte(0), 0
	for _, c := range []byte(hdr[1:]) {
		switch {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return nil, p.errAt(line, "bad block scalar header %q", hdr)
		}
	}
	p.i++
	// The content lines: those more indented than the entry, and blank
	// lines among them.
	start := p.i
	end := p.i
	for j := p.i; j < len(p.lines); j++ {
		l := p.lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		if indentOf(l) <= ind {
			break
		}
		end = j + 1
	}
	content := p.lines[start:end]
	p.i = end
	bi := 0
	if explicit > 0 {
		bi = ind + explicit
	} else {
		for _, l := range content {
			if strings.TrimSpace(l) != "" {
				bi = indentOf(l)
				break
			}
		}
	}
	var texts []string
	for k, l := range content {
		if strings.TrimSpace(l) == "" {
			if len(l) > bi {
				texts = append(texts, l[bi:])
			} else {
				texts = append(texts, "")
			}
			continue
		}
		if indentOf(l) < bi {
			return nil, p.errAt(start+k, "block scalar line less indented than its first")
		}
		if strings.Contains(l[:bi], "\t") {
			return nil, p.errAt(start+k, "tab in indentation")
		}
		texts = append(texts, l[bi:])
	}
	// Trailing blank lines are kept apart for chomping.
	n := len(texts)
	for n > 0 && strings.TrimSpace(texts[n-1]) == "" {
		n--
	}
	trail := len(texts) - n
	// Blank lines after the content but before the next entry belong to
	// the scalar too (for keep chomping).
	for j := end; j < len(p.lines) && strings.TrimSpace(p.lines[j]) == ""; j++ {
		trail++
	}
	body := texts[:n]
	var b strings.Builder
	if style == '|' {
		for _, t := range body {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	} else {
		// Folding: see fold.
		b.WriteString(fold(body))
		if n > 0 {
			b.WriteByte('\n')
		}
	}
	s := b.String()
	switch chomp {
	case '-':
		s = strings.TrimRight(s, "\n")
	case '+':
		s += strings.Repeat("\n", trail)
	default:
		if n == 0 {
			s = ""
		}
	}
	return s, nil
}

// fold joins the lines of a folded block scalar as YAML does.
func fold(lines []string) string {
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		t := lines[i]
		b.WriteString(t)
		if i == len(lines)-1 {
			break
		}
		more := func(s string) bool { return strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") }
		// Count the empty lines that follow.
		j := i + 1
		for j < len(lines) && lines[j] == "" {
			j++
		}
		empties := j - i - 1
		if j >= len(lines) {
			b.WriteString(strings.Repeat("\n", empties))
			break
		}
		switch {
		case t == "" || more(t) || more(lines[j]):
			b.WriteString(strings.Repeat("\n", empties+1))
		case empties == 0:
			b.WriteByte(' ')
		default:
			b.WriteString(strings.Repeat("\n", empties))
		}
		i = j - 1
	}
	return b.String()
}
