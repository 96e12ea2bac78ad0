// Package conformance holds the fixture programs that the official MCP
// conformance suite (@modelcontextprotocol/conformance on npm) tests. It
// has no API of its own:
//
//   - everything-server: a server with every tool, resource, prompt and
//     completion the suite's server scenarios call, over stdio or, with
//     -http ADDR, Streamable HTTP at /mcp. The server is built by package
//     everything, which redisstore/cmd/everything-server also serves,
//     with its state in Redis.
//   - everything-client: a client that plays the suite's client scenarios,
//     chosen by the MCP_CONFORMANCE_SCENARIO environment variable.
//   - expected-failures.yaml: the scenarios the fixtures are known to
//     fail, each with its reason, in the suite's --expected-failures
//     format.
//
// TestOfficialSuiteServer and TestOfficialSuiteClient in
// conformance_test.go at the repository root install the suite (and a
// Node.js >= 22 it needs) with npm into the user cache directory, at the
// versions pinned there, build the fixtures, run the suite's 2025-11-25
// requirement set against them, and fail on every FAILURE check of a
// scenario not listed in expected-failures.yaml, on a listed scenario
// that passes, and on a client that does not exit cleanly. They skip in
// -short mode and when npm is not on PATH. Set MCPKIT_CONFORMANCE_OUT to
// a directory to keep the suite's results (checks.json, and the client's
// stdout and stderr, per scenario) there. Set MCPKIT_CONFORMANCE_SERVER_URL
// to test the server at that URL instead of everything-server:
// TestOfficialSuiteReplicas in redisstore points it at three replicas of
// redisstore/cmd/everything-server behind a round-robin proxy.
//
// To run a fixture by hand, with the suite installed (node >= 22):
//
//	go run ./internal/conformance/everything-server -http 127.0.0.1:3001 &
//	node .../@modelcontextprotocol/conformance/dist/index.js server \
//		--url http://127.0.0.1:3001/mcp --requirements 2025-11-25
//
//	go build -o /tmp/everything-client ./internal/conformance/everything-client
//	node .../dist/index.js client --command /tmp/everything-client \
//		--scenario tools_call
package conformance
