// Package interop holds mcpkit's interoperability tests against the
// official TypeScript implementation of MCP. It has no API; everything is
// in its tests:
//
//   - ts_client_test.go: the TypeScript SDK client (ts_client.mjs, run
//     with node) drives mcpkit's example stdio server
//     (examples/stdio-server).
//   - ts_v2_client_test.go: the TypeScript SDK v2 client
//     (@modelcontextprotocol/client, ts_v2_client.mjs) in its 2026-07-28
//     mode drives mcpkit's conformance fixture server over stdio and
//     Streamable HTTP, input_required rounds included.
//   - everything_test.go: mcpkit's Client drives the TypeScript
//     reference server @modelcontextprotocol/server-everything over stdio,
//     calling everything it offers and answering its sampling,
//     elicitation and roots requests; and it negotiates each protocol
//     revision mcpkit speaks with it.
//   - auth_test.go: authorization (OAuth 2.1) across the two
//     implementations, with mcpkit's test authorization server
//     (auth/authtest) issuing the tokens. The TypeScript SDK v2 client
//     (ts_auth_client.mjs) logs in to mcpkit's server behind the auth
//     middleware (auth.RequireToken with a JWT verifier), in both eras,
//     with bearer and with DPoP-bound tokens (nonces too): it reads the
//     Protected Resource Metadata the 401 points at, registers
//     dynamically, runs the authorization code flow with PKCE through a
//     headless user agent, and calls a tool that answers the token's
//     subject. And mcpkit's client, with an auth.Authorizer and its
//     headless agent, logs in to the TypeScript SDK v2 server
//     (ts_auth_server.mjs) behind the SDK's requireBearerAuth, whose
//     verifier asks the authorization server's introspection endpoint,
//     in each era setting, and steps up when a tool's scope challenge
//     refuses its token (403 insufficient_scope).
//
// example_expectations_test.go says what the first test knows about the
// example server; wire_test.go reads the wire logs in which the second
// one allows only the protocol errors it provokes on purpose.
//
// Environment, for debugging only: MCPKIT_INTEROP_WIRE_LOG=<file> writes
// the full wire log of the server-everything session there;
// MCPKIT_INTEROP_STDIO_SERVER=<binary> runs the TypeScript client against
// that binary instead of building examples/stdio-server.
//
// The npm packages are pinned to exact versions in one place,
// package.json beside this file, with package-lock.json fixing the whole
// dependency tree. The tests install them with `npm ci` into a cache
// directory outside the repository, keyed by a hash of those two files
// (see nodeModules in setup_test.go), and re-use it afterwards. They skip
// only when node or npm is not on PATH; any other failure, an npm install
// failure included, fails them.
//
// To move to newer versions: edit the versions in package.json, run
// `npm install --package-lock-only --no-audit --no-fund` in this directory
// to regenerate package-lock.json, and run `go test ./internal/interop/`.
package interop
