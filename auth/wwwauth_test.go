package auth

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseWWWAuthenticate(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []Challenge
	}{
		{
			in: []string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`},
			want: []Challenge{{Scheme: "Bearer", Params: map[string]string{
				"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource", "scope": "files:read"}}},
		},
		{
			in: []string{`Bearer error="insufficient_scope", scope="a b", error_description="needs \"b\""`},
			want: []Challenge{{Scheme: "Bearer", Params: map[string]string{
				"error": "insufficient_scope", "scope": "a b", "error_description": `needs "b"`}}},
		},
		{
			in: []string{`DPoP algs="ES256 RS256", error=use_dpop_nonce, Bearer realm="x"`},
			want: []Challenge{
				{Scheme: "DPoP", Params: map[string]string{"algs": "ES256 RS256", "error": "use_dpop_nonce"}},
				{Scheme: "Bearer", Params: map[string]string{"realm": "x"}},
			},
		},
		{
			in: []string{`Basic`, `Bearer`},
			want: []Challenge{
				{Scheme: "Basic", Params: map[string]string{}},
				{Scheme: "Bearer", Params: map[string]string{}},
			},
		},
		{
			in:   []string{`Negotiate a87421000492aa874209af8bc028==, Bearer Realm = "r" , SCOPE=x, scope=y`},
			want: []Challenge{{Scheme: "Negotiate", Token68: "a87421000492aa874209af8bc028==", Params: map[string]string{}}, {Scheme: "Bearer", Params: map[string]string{"realm": "r", "scope": "x"}}},
		},
		{
			in:   []string{`Bearer scope="unterminated`},
			want: []Challenge{{Scheme: "Bearer", Params: map[string]string{"scope": "unterminated"}}},
		},
		{in: []string{``, ` , ,`}, want: nil},
	} {
		got := ParseWWWAuthenticate(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseWWWAuthenticate(%q) =\n  %#v\nwant\n  %#v", tc.in, got, tc.want)
		}
	}
	c := ParseWWWAuthenticate([]string{`bearer Scope="a  b"`})[0]
	if !c.Is("Bearer") || c.Param("SCOPE") != "a  b" || !reflect.DeepEqual(c.Scopes(), []string{"a", "b"}) {
		t.Errorf("accessors: %v %q %q", c.Is("Bearer"), c.Param("SCOPE"), c.Scopes())
	}
}

func TestParseWWWAuthenticateBounds(t *testing.T) {
	many := strings.Repeat("Bearer a=b, ", 100)
	if n := len(ParseWWWAuthenticate([]string{many})); n != maxChallenges {
		t.Errorf("%d challenges, want the bound %d", n, maxChallenges)
	}
	var params strings.Builder
	params.WriteString("Bearer ")
	for i := range 100 {
		params.WriteString("p" + strings.Repeat("x", i) + "=v, ")
	}
	if n := len(ParseWWWAuthenticate([]string{params.String()})[0].Params); n != maxChallengeParams {
		t.Errorf("%d params, want the bound %d", n, maxChallengeParams)
	}
	huge := `Bearer scope="` + strings.Repeat("s", 2*maxChallengeBytes) + `"`
	if got := ParseWWWAuthenticate([]string{huge, "DPoP"}); len(got) != 1 || len(got[0].Param("scope")) >= maxChallengeBytes {
		t.Errorf("an oversized header was read past the bound")
	}
}

func FuzzParseWWWAuthenticate(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
		`DPoP algs="ES256", error="use_dpop_nonce", Bearer`,
		`Negotiate abc==, Basic realm=x`,
		`Bearer error="insufficient_scope", scope="a\"b", x=`,
		`,,= "`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		chs := ParseWWWAuthenticate([]string{s, s})
		if len(chs) > maxChallenges {
			t.Fatalf("%d challenges", len(chs))
		}
		for _, c := range chs {
			if c.Scheme == "" {
				t.Fatalf("a challenge without a scheme in %q", s)
			}
			if len(c.Params) > maxChallengeParams {
				t.Fatalf("%d params", len(c.Params))
			}
			for k := range c.Params {
				if k != strings.ToLower(k) || k == "" {
					t.Fatalf("param name %q", k)
				}
			}
		}
	})
}
