// Package everything builds the fixture server that the official MCP
// conformance suite (@modelcontextprotocol/conformance) tests: every
// tool, resource, prompt and completion the suite's server scenarios of
// the 2025-11-25 requirement set call, with the argument and result
// shapes they expect, and the skills of the Skills extension (SEP-2640)
// that its sep-2640-* scenarios look for (see skills.go).
//
// Two commands serve it: internal/conformance/everything-server, one
// process with in-memory state, and redisstore/cmd/everything-server,
// whose replicas share their state in Redis ([Options].Server and
// [Options].HTTP add the shared stores).
package everything
