// ts_v2_client.mjs drives an MCP server with the official TypeScript SDK
// v2 client (@modelcontextprotocol/client) in its 2026-07-28 mode
// (versionNegotiation auto: server/discover, then per-request _meta) and
// prints a JSON summary on stdout. mcpkit's interop test
// (ts_v2_client_test.go) runs it against mcpkit's conformance fixture
// server, over stdio and over Streamable HTTP.
//
// Usage: node ts_v2_client.mjs --url <Streamable HTTP URL>
//        node ts_v2_client.mjs -- <server command> [args...]
//
// The client declares elicitation, sampling and roots and answers them
// deterministically (name "Ada", text "Paris", one root), so that the
// server's input_required rounds complete inside callTool.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const argv = process.argv.slice(2);
const watchdog = setTimeout(() => {
  console.error("ts_v2_client: timed out");
  process.exit(3);
}, 30000);

const client = new Client(
  { name: "ts-v2-interop", version: "1.0.0" },
  {
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
    versionNegotiation: { mode: "auto" },
  },
);
const counts = { elicitation: 0, sampling: 0, roots: 0 };
client.setRequestHandler("elicitation/create", async () => {
  counts.elicitation++;
  return { action: "accept", content: { name: "Ada", context: "interop", ok: true, color: "blue" } };
});
client.setRequestHandler("sampling/createMessage", async () => {
  counts.sampling++;
  return { role: "assistant", content: { type: "text", text: "Paris" }, model: "interop" };
});
client.setRequestHandler("roots/list", async () => {
  counts.roots++;
  return { roots: [{ uri: "file:///interop", name: "interop" }] };
});

let transport;
if (argv[0] === "--url") {
  transport = new StreamableHTTPClientTransport(new URL(argv[1]));
} else if (argv[0] === "--") {
  transport = new StdioClientTransport({ command: argv[1], args: argv.slice(2), stderr: "ignore" });
} else {
  console.error("usage: node ts_v2_client.mjs --url <URL> | -- <command> [args...]");
  process.exit(2);
}

const summary = { calls: {}, errors: {} };
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
try {
  await client.connect(transport);
  summary.protocolVersion = client.getNegotiatedProtocolVersion();
  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name).sort();
  for (const name of [
    "test_simple_text",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
  ]) {
    try {
      summary.calls[name] = text(await client.callTool({ name, arguments: {} }));
    } catch (e) {
      summary.errors[name] = String(e?.message ?? e);
    }
  }
  try {
    // The W3C trace context in _meta, which the server's tracing continues.
    summary.traceContext = text(await client.callTool({
      name: "test_trace_context",
      arguments: {},
      _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "interop=1" },
    }));
  } catch (e) {
    summary.errors.traceContext = String(e?.message ?? e);
  }
  try {
    const p = await client.getPrompt({ name: "test_input_required_result_prompt" });
    summary.prompt = p.messages.map((m) => m.content.text).join("\n");
  } catch (e) {
    summary.errors.prompt = String(e?.message ?? e);
  }
  try {
    const r = await client.readResource({ uri: "test://static-text" });
    summary.resource = r.contents[0]?.text;
  } catch (e) {
    summary.errors.resource = String(e?.message ?? e);
  }
} catch (e) {
  summary.errors.connect = String(e?.stack ?? e);
}
summary.counts = counts;
console.log(JSON.stringify(summary));
clearTimeout(watchdog);
await client.close().catch(() => {});
process.exit(0);
