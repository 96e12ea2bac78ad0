// ts_v2_server.mjs serves MCP with the official TypeScript SDK v2 server
// (@modelcontextprotocol/server) in its 2026-07-28 mode, for mcpkit's
// interop test ts_v2_server_test.go, which connects mcpkit's client to it.
//
// Usage: node ts_v2_server.mjs stdio
//        node ts_v2_server.mjs http
//
// "stdio" serves one connection on standard input and output with
// serveStdio, which picks the era from the connection's first message:
// server/discover (or any request carrying the 2026-07-28 _meta envelope)
// pins it to 2026-07-28, initialize to the handshake era. "http" serves
// Streamable HTTP with createMcpHandler on 127.0.0.1, on a port the
// system picks, and prints "listening on <URL>" on stdout once it
// accepts connections; the handler answers requests carrying the
// envelope in 2026-07-28 and, by default, everything else with its
// stateless handshake-era fallback. Both entries build a server from the
// same factory (one instance per connection on stdio, one per request
// over HTTP).
//
// The server offers:
//   - tools: echo (text back), greet (asks for a name with an
//     elicitation), ask_model (asks the client's model with sampling),
//     client_roots (asks for the client's roots), profile (two
//     elicitation rounds, the first answer carried in requestState),
//     weather (its region argument marked x-mcp-header: Region), and
//     bad_header (an x-mcp-header mark the rules forbid);
//   - a prompt, greeting (argument name);
//   - a resource, test://info, and a resource template, test://items/{id}.
//
// The 2026-07-28 handlers ask for input with input_required results
// (inputRequired), which the client answers by sending the request again
// with inputResponses; on handshake-era connections the SDK turns them
// into server-to-client requests itself.

import { createServer } from "node:http";
import { Readable } from "node:stream";
import {
  McpServer,
  ResourceTemplate,
  acceptedContent,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

/** The text of a tool result. */
const text = (s) => ({ content: [{ type: "text", text: s }] });

/** An object schema of string properties, all required. */
const strings = (...names) =>
  fromJsonSchema({
    type: "object",
    properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])),
    required: names,
  });

/** An elicitation form asking for one string property. */
const form = (message, name) =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: "object", properties: { [name]: { type: "string" } }, required: [name] },
  });

/** newServer builds the server every connection or request is served by. */
function newServer() {
  const server = new McpServer(
    { name: "ts-v2-interop-server", version: "1.0.0" },
    {
      capabilities: { tools: {}, prompts: {}, resources: {} },
      instructions: "A TypeScript SDK v2 server for mcpkit's interop tests.",
    },
  );

  server.registerTool(
    "echo",
    { description: "Returns its message.", inputSchema: strings("message") },
    async ({ message }) => text(`Echo: ${message}`),
  );

  server.registerTool(
    "greet",
    { description: "Asks the user's name with an elicitation and greets them." },
    async (ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "name");
      if (typeof answer?.name !== "string") {
        return inputRequired({ inputRequests: { name: form("What is your name?", "name") } });
      }
      return text(`Hello, ${answer.name}!`);
    },
  );

  server.registerTool(
    "ask_model",
    { description: "Asks the client's model a question with sampling." },
    async (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, "capital");
      if (view.kind !== "sampling") {
        return inputRequired({
          inputRequests: {
            capital: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
              maxTokens: 16,
            }),
          },
        });
      }
      const c = view.result.content;
      return text(`The model said: ${Array.isArray(c) ? c.map((b) => b.text).join("") : c.text}`);
    },
  );

  server.registerTool(
    "client_roots",
    { description: "Lists the client's roots." },
    async (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, "roots");
      if (view.kind !== "roots") {
        return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
      }
      return text(`Roots: ${view.roots.map((r) => r.uri).join(", ")}`);
    },
  );

  server.registerTool(
    "profile",
    { description: "Asks for a name, then a colour, in two rounds." },
    async (ctx) => {
      const color = acceptedContent(ctx.mcpReq.inputResponses, "color");
      const state = ctx.mcpReq.requestState();
      if (typeof state === "string" && state.startsWith("name:") && typeof color?.color === "string") {
        return text(`${state.slice("name:".length)} likes ${color.color}`);
      }
      const name = acceptedContent(ctx.mcpReq.inputResponses, "name");
      if (typeof name?.name === "string") {
        return inputRequired({
          inputRequests: { color: form("What is your favourite colour?", "color") },
          requestState: `name:${name.name}`,
        });
      }
      return inputRequired({ inputRequests: { name: form("What is your name?", "name") } });
    },
  );

  server.registerTool(
    "weather",
    {
      description: "Reports the weather of a region; the region travels in the Mcp-Param-Region header too.",
      inputSchema: fromJsonSchema({
        type: "object",
        properties: {
          region: { type: "string", "x-mcp-header": "Region" },
          city: { type: "string" },
        },
        required: ["region"],
      }),
    },
    async ({ region, city }, ctx) => {
      const header = ctx.http?.req?.headers.get("mcp-param-region");
      const seen = header == null ? "no header" : `header ${header}`;
      return text(`Weather in ${region}${city ? "/" + city : ""}: sunny (${seen})`);
    },
  );

  // An x-mcp-header on a number-typed property breaks the rules
  // (string, integer and boolean only): clients over Streamable HTTP must
  // leave this tool out of tools/list. The SDK lists it anyway, with a
  // warning on stderr.
  server.registerTool(
    "bad_header",
    {
      description: "A tool whose x-mcp-header mark is invalid.",
      inputSchema: fromJsonSchema({
        type: "object",
        properties: { amount: { type: "number", "x-mcp-header": "Amount" } },
      }),
    },
    async () => text("bad_header called"),
  );

  server.registerPrompt(
    "greeting",
    { description: "A greeting for someone.", argsSchema: strings("name") },
    async ({ name }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Please greet ${name}.` } }],
    }),
  );

  server.registerResource(
    "info",
    "test://info",
    { description: "A static text resource.", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "TypeScript v2 server resource" }] }),
  );

  server.registerResource(
    "item",
    new ResourceTemplate("test://items/{id}", { list: undefined }),
    { description: "An item by id.", mimeType: "text/plain" },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `Item ${id}` }] }),
  );

  return server;
}

/** serveHTTP serves handler on 127.0.0.1 and prints the endpoint's URL. */
function serveHTTP(handler) {
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        for (const v of Array.isArray(value) ? value : [value]) {
          if (v !== undefined) headers.append(name, v);
        }
      }
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(url, {
        method: req.method,
        headers,
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: hasBody ? "half" : undefined,
        signal: abort.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders();
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (err) {
      console.error("ts_v2_server:", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  http.listen(0, "127.0.0.1", () => {
    const { address, port } = http.address();
    console.log(`listening on http://${address}:${port}/mcp`);
  });
}

const onerror = (err) => console.error("ts_v2_server:", err?.message ?? err);
switch (process.argv[2]) {
  case "stdio":
    serveStdio(newServer, { onerror });
    break;
  case "http":
    serveHTTP(createMcpHandler(newServer, { onerror }));
    break;
  default:
    console.error("usage: node ts_v2_server.mjs stdio | http");
    process.exit(2);
}
