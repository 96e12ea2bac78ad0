// ts_tasks_server.mjs serves MCP tools that run as tasks (the task
// utility of protocol revision 2025-11-25) with the official TypeScript
// SDK 1.x server (McpServer with its experimental task support:
// registerToolTask, InMemoryTaskStore, InMemoryTaskMessageQueue), for
// mcpkit's interop test ts_tasks_server_test.go, which drives them with
// mcpkit's client.
//
// Usage: node ts_tasks_server.mjs stdio
//        node ts_tasks_server.mjs http
//
// "stdio" serves one connection on standard input and output; "http"
// serves Streamable HTTP (with sessions) on 127.0.0.1, on a port the
// system picks, and prints "listening on <URL>" on stdout once it
// accepts connections.
//
// The tools:
//   - compute (taskSupport required): completes with "computed <n>";
//   - compute_optional (optional): the same; called without a task, the
//     SDK runs the task itself and answers with its result;
//   - fail (required): fails with a tool error (isError, "it broke");
//   - wait (required): runs until cancelled;
//   - confirm (required): asks the client (an elicitation queued for the
//     task, which the SDK delivers on the tasks/result stream) whether
//     to delete a file, then completes with "Deleted <file>" or
//     "Kept <file>";
//   - greet (no tasks): "Hello, <name>!".

import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";

const text = (s) => ({ content: [{ type: "text", text: s }] });

// One store and queue for all connections: the SDK keys tasks by session.
const taskStore = new InMemoryTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

// The handlers of tasks/get and tasks/result for a tool task (the SDK
// uses them when it runs an optional tool's task itself).
const reads = {
  getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
  getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
};

/** newServer builds the server of one connection (stdio) or session (HTTP). */
function newServer() {
  const server = new McpServer(
    { name: "ts-tasks-interop-server", version: "1.0.0" },
    {
      capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue,
    },
  );

  // task registers a tool task whose work is run(args, taskId, extra),
  // started once the task exists; its outcome completes the task.
  const task = (name, support, inputSchema, run) =>
    server.experimental.tasks.registerToolTask(
      name,
      { description: `${name} (a task: ${support})`, inputSchema, execution: { taskSupport: support } },
      {
        async createTask(args, extra) {
          const t = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60000, pollInterval: 100 });
          run(args, t.taskId, extra)
            .then(
              (out) => out && extra.taskStore.storeTaskResult(t.taskId, out.isError ? "failed" : "completed", out),
              (e) => extra.taskStore.storeTaskResult(t.taskId, "failed", { ...text(`Error: ${e?.message ?? e}`), isError: true }),
            )
            .catch((e) => console.error(`ts_tasks_server: task ${t.taskId}: ${e}`));
          return { task: t };
        },
        ...reads,
      },
    );

  task("compute", "required", { n: z.number() }, async ({ n }) => text(`computed ${n}`));
  task("compute_optional", "optional", { n: z.number() }, async ({ n }) => text(`computed ${n}`));
  task("fail", "required", {}, async () => ({ ...text("it broke"), isError: true }));
  task("wait", "required", {}, async () => undefined); // ends only when cancelled
  task("confirm", "required", { filename: z.string() }, async ({ filename }, taskId, extra) => {
    const res = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: {
          message: `Delete ${filename}?`,
          requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
        },
      },
      ElicitResultSchema,
      { relatedTask: { taskId } },
    );
    return text(res.action === "accept" && res.content?.confirm === true ? `Deleted ${filename}` : `Kept ${filename}`);
  });
  server.registerTool("greet", { description: "Greets someone.", inputSchema: { name: z.string() } }, async ({ name }) =>
    text(`Hello, ${name}!`),
  );
  return server;
}

const mode = process.argv[2];
if (mode === "stdio") {
  await newServer().connect(new StdioServerTransport());
} else if (mode === "http") {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      const id = req.headers["mcp-session-id"];
      let transport = id && sessions.get(id);
      if (!transport) {
        if (id || req.method !== "POST") {
          res.writeHead(id ? 404 : 400).end();
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await newServer().connect(transport);
      }
      await transport.handleRequest(req, res);
    } catch (e) {
      console.error(`ts_tasks_server: ${e?.stack ?? e}`);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  http.listen(0, "127.0.0.1", () => {
    const { address, port } = http.address();
    console.log(`listening on http://${address}:${port}/mcp`);
  });
} else {
  console.error("usage: node ts_tasks_server.mjs stdio|http");
  process.exit(2);
}
