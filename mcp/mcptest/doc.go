// Package mcptest helps test code built on package mcp with go test: a
// server in process with a client, the wire between them, the client's
// side of the questions a server asks, and task stores.
//
// [Connect] connects a client to a server over the in-memory transport,
// in the protocol era the test chooses ([Options.ProtocolVersion]; [Eras]
// gives one revision of each, for a test that runs in both), and at the
// end of the test closes both and fails it if a goroutine of either is
// still running ([CheckGoroutines]).
//
// A [Transcript] records the JSON-RPC messages of the session, both ways
// and in order, and compares them with a golden file under testdata
// ([Transcript.CompareGolden]) after replacing what changes from run to
// run: ids, request states, task IDs, progress tokens, timestamps.
// go test -mcptest.update rewrites the golden files.
//
// A [Script] answers the server's requests to the client (sampling,
// elicitation, roots) from a list of expected requests and canned answers,
// and fails the test on a request it does not expect and on a step left
// unused ([AnyOrder] groups the questions a handler asks at once). The
// same script serves both eras: in 2026-07-28 the questions
// come as input_required rounds, which the client answers with the same
// handlers, so one test checks a tool that asks for input in both.
//
//	func TestBook(t *testing.T) {
//		for _, v := range mcptest.Eras() {
//			t.Run(v, func(t *testing.T) {
//				script := mcptest.NewScript(t, mcptest.Elicit(&mcp.ElicitResult{
//					Action:  mcp.ElicitActionAccept,
//					Content: map[string]any{"confirm": true},
//				}))
//				cs := mcptest.Connect(t, newServer(), &mcptest.Options{ProtocolVersion: v, Script: script})
//				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "book"})
//				// check res and err
//			})
//		}
//	}
//
// [TaskStoreSuite] checks that an implementation of [mcp.TaskStore]
// behaves as the interface says, and [Clock] is a fake clock for it and
// for code of your own.
package mcptest
