//go:build !mcpkit_nohttp

package transport

import "testing"

// TestLeadingMember: the short way to a request's _meta and mirrored
// member takes params as this package's client writes them, and leaves
// any other shape to the scan.
func TestLeadingMember(t *testing.T) {
	const known = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, c := range []struct {
		name, params, member string
		known                string
		ok                   bool
		value                string
	}{
		{"name", `{"_meta":` + known + `,"name":"echo","arguments":{"name":"x"}}`, "name", known, true, `"echo"`},
		{"last member", `{"_meta":` + known + `,"name":"echo"}`, "name", known, true, `"echo"`},
		{"escaped quote", `{"_meta":` + known + `,"name":"a\"b\\","arguments":{}}`, "name", known, true, `"a\"b\\"`},
		{"uri", `{"_meta":` + known + `,"uri":"file:///x"}`, "uri", known, true, `"file:///x"`},
		{"no member wanted", `{"_meta":` + known + `,"cursor":"c"}`, "", known, true, ``},
		{"only _meta", `{"_meta":` + known + `}`, "", known, true, ``},
		{"another member first", `{"_meta":` + known + `,"arguments":{},"name":"echo"}`, "name", known, false, ``},
		{"_meta not first", `{"name":"echo","_meta":` + known + `}`, "name", known, false, ``},
		{"another _meta", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-29"},"name":"echo"}`, "name", known, false, ``},
		{"no memo yet", `{"_meta":` + known + `,"name":"echo"}`, "name", ``, false, ``},
		{"not a string", `{"_meta":` + known + `,"name":7}`, "name", known, false, ``},
		{"a longer name", `{"_meta":` + known + `,"names":"echo"}`, "name", known, false, ``},
		{"white space", `{"_meta":` + known + `, "name":"echo"}`, "name", known, false, ``},
		{"unterminated", `{"_meta":` + known + `,"name":"echo`, "name", known, false, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			meta, value, ok := leadingMember([]byte(c.params), []byte(c.known), c.member)
			if ok != c.ok || string(value) != c.value || ok && string(meta) != c.known {
				t.Errorf("leadingMember = %s, %s, %v; want %s, %s, %v", meta, value, ok, c.known, c.value, c.ok)
			}
		})
	}
}
