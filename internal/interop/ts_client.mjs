// ts_client.mjs drives an MCP stdio server with the official TypeScript
// SDK client and prints a JSON summary of everything it did on stdout.
// mcpkit's interop test (ts_client_test.go) runs it against mcpkit's
// example stdio server and asserts on the summary.
//
// Usage: node ts_client.mjs <options.json> -- <server command> [args...]
//        node ts_client.mjs <options.json> --url <Streamable HTTP URL>
//        node ts_client.mjs <options.json> --sse <HTTP+SSE URL>
//
// options.json (all fields optional):
//   toolArgs:        { toolName: {arguments} }  arguments per tool; tools
//                    not named get arguments built from their inputSchema
//   promptArgs:      { promptName: {arguments} }
//   skipTools:       [ toolName ]               tools not to call
//   extraToolCalls:  [ {name, arguments} ]      further calls, made after
//                    every listed tool was called (e.g. failing ones);
//                    reported in extraToolCalls
//   maxReads:        number of listed resources to read (default 50)
//   templateReads:   [ uri ]                    extra URIs to read
//   templateVars:    { variable: value }        every listed URI template
//                    is expanded with these (missing variables: "1")
//                    and read (level-1 {var} expressions only)
//   completions:     [ CompleteRequest params ] completion/complete calls
//   roots:           [ {uri, name} ]            the roots this client offers
//   timeoutMs:       per-request timeout (default 10000)
//
// The client declares sampling, elicitation (form) and roots, and answers
// those requests deterministically; the summary counts them. Stderr
// carries diagnostics only. The exit code is 0 when the summary was
// printed, even if individual calls failed (they are in the summary).

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const mode = argv[1];
if (argv.length < 3 || !["--", "--url", "--sse"].includes(mode)) {
  console.error("usage: node ts_client.mjs <options.json> -- <server command> [args...]");
  console.error("       node ts_client.mjs <options.json> --url <Streamable HTTP URL>");
  console.error("       node ts_client.mjs <options.json> --sse <HTTP+SSE URL>");
  process.exit(2);
}
const opts = JSON.parse(readFileSync(argv[0], "utf8"));
const [command, ...args] = argv.slice(2);
const timeout = opts.timeoutMs ?? 10000;

// A watchdog: the Go test bounds this process too, but a stuck script
// should say so itself.
setTimeout(() => {
  console.error("ts_client: watchdog expired");
  process.exit(3);
}, 4 * timeout + 20000).unref();

const summary = {
  sdkClient: "@modelcontextprotocol/sdk",
  serverInfo: null,
  protocolVersion: null,
  capabilities: null,
  instructions: null,
  ping: null,
  tools: [],
  toolCalls: [],
  extraToolCalls: [],
  resources: [],
  resourceTemplates: [],
  reads: [],
  prompts: [],
  promptGets: [],
  completions: [],
  setLevel: null,
  serverRequests: { sampling: 0, elicitation: 0, roots: 0 },
  notifications: { logging: 0, progress: 0, toolsChanged: 0, resourcesChanged: 0, promptsChanged: 0 },
  errors: [],
};

function errInfo(e) {
  return { code: e?.code ?? null, message: String(e?.message ?? e) };
}

// sampleValue returns a value fitting a JSON Schema property.
function sampleValue(name, s) {
  if (!s || typeof s !== "object") return "sample";
  if ("default" in s) return s.default;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  for (const k of ["oneOf", "anyOf"]) {
    if (Array.isArray(s[k]) && s[k].length) return sampleValue(name, s[k][0]);
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "string":
      if (s.format === "email") return "interop@example.com";
      if (s.format === "uri") return "https://example.com/interop";
      if (s.format === "date") return "2000-01-02";
      if (s.format === "date-time") return "2000-01-02T03:04:05Z";
      return `interop ${name}`;
    case "integer":
      return s.minimum ?? 7;
    case "number":
      return s.minimum ?? 2.5;
    case "boolean":
      return true;
    case "array":
      return s.items ? [sampleValue(name, s.items)] : [];
    case "object": {
      const o = {};
      for (const r of s.required ?? []) o[r] = sampleValue(r, s.properties?.[r]);
      return o;
    }
    default:
      return "sample";
  }
}

function argsFor(schema) {
  const out = {};
  for (const r of schema?.required ?? []) out[r] = sampleValue(r, schema.properties?.[r]);
  return out;
}

const client = new Client(
  { name: "mcpkit-interop-ts-client", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);

client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  summary.serverRequests.sampling++;
  const first = req.params.messages?.[0]?.content;
  const text = Array.isArray(first) ? first.find((c) => c.type === "text")?.text : first?.text;
  return {
    role: "assistant",
    content: { type: "text", text: `ts-sampled: ${text ?? ""}` },
    model: "ts-interop-model",
    stopReason: "endTurn",
  };
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  summary.serverRequests.elicitation++;
  if (req.params.mode === "url") return { action: "accept" };
  const schema = req.params.requestedSchema ?? {};
  const content = {};
  for (const [k, s] of Object.entries(schema.properties ?? {})) content[k] = sampleValue(k, s);
  return { action: "accept", content };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  summary.serverRequests.roots++;
  return { roots: opts.roots ?? [{ uri: "file:///tmp/mcpkit-interop", name: "interop" }] };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, () => summary.notifications.logging++);
client.setNotificationHandler(ToolListChangedNotificationSchema, () => summary.notifications.toolsChanged++);
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => summary.notifications.resourcesChanged++);
client.setNotificationHandler(PromptListChangedNotificationSchema, () => summary.notifications.promptsChanged++);

async function all(list, key) {
  const items = [];
  let cursor;
  const seen = new Set();
  do {
    const res = await list(cursor === undefined ? {} : { cursor }, { timeout });
    items.push(...res[key]);
    cursor = res.nextCursor;
    if (cursor !== undefined && seen.has(cursor)) break;
    seen.add(cursor);
  } while (cursor !== undefined);
  return items;
}

async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    summary.errors.push({ step: what, ...errInfo(e) });
    return undefined;
  }
}

let transport;
if (mode === "--url") {
  transport = new StreamableHTTPClientTransport(new URL(command));
} else if (mode === "--sse") {
  transport = new SSEClientTransport(new URL(command));
} else {
  transport = new StdioClientTransport({ command, args, stderr: "inherit" });
}
// The client hands the negotiated revision to transports that want it;
// catch it here (and pass it on to those that use it).
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  summary.protocolVersion = v;
  setVersion?.(v);
};
try {
  await client.connect(transport, { timeout });
} catch (e) {
  summary.errors.push({ step: "connect", ...errInfo(e) });
  console.log(JSON.stringify(summary));
  process.exit(0);
}
summary.serverInfo = client.getServerVersion() ?? null;
summary.capabilities = client.getServerCapabilities() ?? null;
summary.instructions = client.getInstructions() ?? null;
const caps = summary.capabilities ?? {};

summary.ping = await step("ping", async () => {
  await client.ping({ timeout });
  return "ok";
});

if (caps.logging) {
  summary.setLevel = await step("logging/setLevel", async () => {
    await client.setLoggingLevel("debug", { timeout });
    return "ok";
  });
}

if (caps.tools) {
  summary.tools = (await step("tools/list", () => all((p, o) => client.listTools(p, o), "tools"))) ?? [];
  const skip = new Set(opts.skipTools ?? []);
  const calls = summary.tools
    .filter((tool) => !skip.has(tool.name))
    .map((tool) => ({
      name: tool.name,
      arguments: opts.toolArgs?.[tool.name] ?? argsFor(tool.inputSchema),
      into: summary.toolCalls,
    }));
  for (const c of opts.extraToolCalls ?? []) calls.push({ ...c, into: summary.extraToolCalls });
  for (const { name, arguments: toolArgs, into } of calls) {
    const call = { name, arguments: toolArgs, progress: 0 };
    try {
      const res = await client.callTool({ name, arguments: toolArgs }, undefined, {
        timeout,
        onprogress: () => {
          call.progress++;
          summary.notifications.progress++;
        },
      });
      call.isError = res.isError ?? false;
      call.content = res.content;
      call.structuredContent = res.structuredContent ?? null;
    } catch (e) {
      call.error = errInfo(e);
    }
    into.push(call);
  }
}

if (caps.resources) {
  summary.resources = (await step("resources/list", () => all((p, o) => client.listResources(p, o), "resources"))) ?? [];
  summary.resourceTemplates =
    (await step("resources/templates/list", () =>
      all((p, o) => client.listResourceTemplates(p, o), "resourceTemplates"),
    )) ?? [];
  const uris = summary.resources.slice(0, opts.maxReads ?? 50).map((r) => r.uri);
  for (const t of summary.resourceTemplates) {
    const uri = t.uriTemplate.replace(/\{([^}]+)\}/g, (_, v) =>
      encodeURIComponent(String(opts.templateVars?.[v] ?? "1")),
    );
    uris.push(uri);
  }
  uris.push(...(opts.templateReads ?? []));
  for (const uri of uris) {
    const read = { uri };
    try {
      const res = await client.readResource({ uri }, { timeout });
      read.contents = res.contents.map((c) => ({
        uri: c.uri,
        mimeType: c.mimeType ?? null,
        text: c.text ?? null,
        blobBase64Length: c.blob === undefined ? null : c.blob.length,
      }));
    } catch (e) {
      read.error = errInfo(e);
    }
    summary.reads.push(read);
  }
}

if (caps.prompts) {
  summary.prompts = (await step("prompts/list", () => all((p, o) => client.listPrompts(p, o), "prompts"))) ?? [];
  for (const prompt of summary.prompts) {
    let promptArgs = opts.promptArgs?.[prompt.name];
    if (!promptArgs) {
      promptArgs = {};
      for (const a of prompt.arguments ?? []) if (a.required) promptArgs[a.name] = `interop ${a.name}`;
    }
    const get = { name: prompt.name, arguments: promptArgs };
    try {
      const res = await client.getPrompt({ name: prompt.name, arguments: promptArgs }, { timeout });
      get.description = res.description ?? null;
      get.messages = res.messages;
    } catch (e) {
      get.error = errInfo(e);
    }
    summary.promptGets.push(get);
  }
}

if (caps.completions) {
  for (const params of opts.completions ?? []) {
    const c = { params };
    try {
      c.completion = (await client.complete(params, { timeout })).completion;
    } catch (e) {
      c.error = errInfo(e);
    }
    summary.completions.push(c);
  }
}

if (mode === "--url") {
  // Ends the session with DELETE (a stateless server answers 405, which
  // the SDK accepts).
  await step("terminateSession", () => transport.terminateSession());
  summary.sessionTerminated = true;
}
await step("close", () => client.close());
console.log(JSON.stringify(summary));
process.exit(0);
