package mcp

import "testing"

func BenchmarkZZInit(b *testing.B) {
	p := &InitializeParams{ProtocolVersion: "2025-11-25", Capabilities: &ClientCapabilities{Roots: &RootsCapabilities{ListChanged: true}}, ClientInfo: &Implementation{Name: "bench", Version: "1"}}
	data, _ := marshalStd(p)
	b.Logf("%s", data)
	b.Run("marshalParams", func(b *testing.B) {
		for b.Loop() {
			marshalStd(p)
		}
	})
	b.Run("unmarshalParams", func(b *testing.B) {
		for b.Loop() {
			var q InitializeParams
			unmarshalStd(data, &q)
		}
	})
}
