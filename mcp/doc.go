// Package mcp implements the Model Context Protocol: the typed protocol
// structures of every revision, a [Server] that offers tools, resources and
// prompts, and a [Client] that connects to any MCP server. Package
// transport carries the messages (stdio, subprocesses, in-memory pairs,
// Streamable HTTP, the legacy HTTP+SSE transport); package jsonrpc
// underneath frames them.
//
// # Servers
//
// A server is made once and serves any number of sessions:
//
//	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
//	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
//		return GreetOut{Greeting: "Hello, " + in.Name}, nil
//	})
//	s.Run(ctx, &transport.StdioTransport{})
//
// [AddTool] infers the tool's input and output schemas from the Go types
// and validates arguments against them before the handler runs; the raw
// [Server.AddTool] takes a schema and JSON arguments instead. Resources,
// resource templates (RFC 6570), prompts and completions are added the
// same way, and may be added and removed while sessions are connected
// (clients are told with list_changed notifications, coalesced, see
// [Server.Batch]). [NewStreamableHTTPHandler] serves a server over HTTP.
//
// Handlers get their request: its params, its session, and the methods
// that ask the client for something ([ServerRequest.Elicit],
// [ServerRequest.CreateMessage], [ServerRequest.ListRoots]). An error a
// handler returns becomes a tool error (isError) for tools/call and an
// internal error elsewhere, unless it carries a JSON-RPC error of its own
// choosing ([*ResourceNotFoundError], [*jsonrpc.Error]); a panic becomes
// an internal error. [Middleware] wraps every method in either direction.
//
// # Protocol eras
//
// MCP has two eras. Revisions 2024-11-05 to 2025-11-25 open a session
// with initialize; 2026-07-28 has no handshake: every request carries the
// revision, the client's capabilities and its name in _meta, and a server
// that needs input from the client answers input_required and gets the
// answers in a retry. One [Server] serves both, on the same stdio
// connection kind or HTTP endpoint: initialize starts a session of the
// handshake era, a request that carries the revision is served on its
// own. Handlers are written once: [ServerRequest.Elicit] and its siblings
// send a request to the client in the handshake era and, in 2026-07-28,
// end the run with [ErrInputRequired], the server answering with every
// ask of the run and running the handler again with the answers (carried
// in a signed requestState, see [ServerOptions.Keys]).
// [ServerRequest.ProtocolVersion], [ServerRequest.ClientCapabilities] and
// [ServerRequest.ClientInfo] read the same in both eras.
//
// # Clients
//
// A client connects over a transport and finds the era itself
// ([ClientOptions.Era], zero value [EraAuto]): it asks server/discover
// first and speaks 2026-07-28 with a server of that era, and otherwise
// runs initialize (over HTTP falling back to HTTP+SSE when that is
// refused too). [ClientSession.Era] and [ClientSession.ProtocolVersion]
// tell what it got. The client answers the server's questions with its
// own handlers ([ClientOptions.CreateMessageHandler],
// [ClientOptions.ElicitationHandler], the roots of [Client.AddRoots]), as
// requests in the handshake era and as input_required rounds in
// 2026-07-28, so the caller of [ClientSession.CallTool] sees only the
// final result. [ClientSession.Listen] asks for change notifications in
// both eras. In 2026-07-28 the client caches list results for as long as
// the server allows ([WithoutCache], [ClientSession.ClearCache]).
//
// # Skills
//
// [Server.AddSkills] serves the skills found in a file system (the
// Skills extension, SEP-2640): every directory holding a SKILL.md is a
// skill, listed with the size and digest of each of its files.
// [Server.AddSkill] serves a "dynamic" skill whose files a
// [ResourceHandler] reads. [Server.RemoveSkills] takes skills away again,
// with their resources. A client finds skills with
// [ClientSession.Skills] and [ClientSession.GetSkill], and
// [ClientSession.LoadSkill] reads a SKILL.md only after checking it
// against its entry: size, then digest, then frontmatter; any mismatch is
// a [*SkillVerificationError] and no content. [LoadedSkill.ReadFile] reads
// the skill's other files, checked the same way (a dynamic skill lists
// no digests: its files are not verified, its SKILL.md only by its
// frontmatter).
//
// # Task store
//
// A [TaskStore] keeps tasks and their results, bounded in count and
// size: [NewMemoryTaskStore] (the default) keeps them in memory and
// [NewFileTaskStore] in a directory, so they survive a restart. Other
// stores can be checked with mcptest.TaskStoreSuite. The task runtime
// that runs tool calls as tasks on a store is not built yet.
//
// # Bounds
//
// Everything a peer can make a server or client hold, such as queued
// notifications, concurrent requests, subscriptions, open exchanges,
// cached values and requestState, has a bound and a time limit, each
// with a documented default in the options ([ServerOptions],
// [ClientOptions], and the transport options of package transport).
//
// # Order
//
// Over every transport, the notifications a peer sends while it handles
// a request (progress, log messages) have reached their handlers when
// the call returns: a handler that logs before it returns has its
// messages in the client's [ClientOptions.LoggingMessageHandler] before
// [ClientSession.CallTool] returns. Notification handlers run one at a
// time, in arrival order; one that waits (for a call of its own, say)
// holds up the others for at most 100ms (see
// [jsonrpc.ConnOptions.MaxQueuedNotifications]).
//
// # JSON
//
// Every protocol type encodes the same through encoding/json as on the
// wire, where a faster engine, without reflection for the common types,
// reads and writes it. Raw JSON travels as [encoding/json.RawMessage].
package mcp
