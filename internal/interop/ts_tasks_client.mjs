// ts_tasks_client.mjs drives the tasks of an MCP server (the task utility
// of protocol revision 2025-11-25) with the official TypeScript SDK 1.x
// client's experimental task API (client.experimental.tasks) and prints
// a JSON summary on stdout. mcpkit's interop test (ts_tasks_test.go)
// runs it against mcpkit's conformance fixture server, whose task tools
// are slow_compute, confirm_delete, multi_input (optional), failing_job,
// protocol_error_job and test_tool_with_task (required).
//
// Usage: node ts_tasks_client.mjs --url <Streamable HTTP URL>
//        node ts_tasks_client.mjs -- <server command> [args...]
//
// What it does, each step recorded under its name (an error in a step is
// recorded there, and the script goes on):
//   streams:  callToolStream with a task param for each task tool, to its
//             end (taskCreated, taskStatus..., result or error); then
//             tasks/get and tasks/result of the ended task
//   cancel:   a long slow_compute made a task with a plain request, then
//             tasks/get, tasks/list, tasks/cancel, tasks/get, a second
//             tasks/cancel and tasks/result of the cancelled task
//   refusals: a required tool called without a task, and tasks/get,
//             tasks/result, tasks/cancel of an unknown task, tasks/list
//             with a cursor the server never gave
//   list:     every task listed at the end (all pages)
// The elicitation handler accepts every form: booleans true, strings
// "ts-user" (or "ts-qN" for a message "Question N..."); it records the
// related-task metadata of each request. The exit code is 0 when the
// summary was printed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
if (mode !== "--url" && mode !== "--") {
  console.error("usage: node ts_tasks_client.mjs --url <URL> | -- <command> [args...]");
  process.exit(2);
}
const timeout = 20000;
setTimeout(() => {
  console.error("ts_tasks_client: watchdog expired");
  process.exit(3);
}, 90000).unref();

const summary = {
  protocolVersion: null,
  tasksCapability: null,
  toolSupport: {},
  streams: {},
  cancel: {},
  refusals: {},
  listed: [],
  created: [],
  elicitations: [],
  statusNotifications: 0,
  errors: [],
};

function errInfo(e) {
  return { code: typeof e?.code === "number" ? e.code : null, message: String(e?.message ?? e) };
}

// attempt runs fn and returns {value} or {error}.
async function attempt(fn) {
  try {
    return { value: await fn() };
  } catch (e) {
    return { error: errInfo(e) };
  }
}

const client = new Client({ name: "ts-tasks-interop", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const message = req.params.message ?? "";
  summary.elicitations.push({ message, relatedTask: req.params._meta?.[RELATED_TASK_META_KEY]?.taskId ?? null });
  const q = /^Question (\d+)/.exec(message);
  const content = {};
  for (const [k, s] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    if (s.type === "boolean") content[k] = true;
    else if (s.type === "string") content[k] = q ? `ts-q${q[1]}` : "ts-user";
  }
  return { action: "accept", content };
});
client.setNotificationHandler(TaskStatusNotificationSchema, () => summary.statusNotifications++);

let transport;
if (mode === "--url") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
}
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
summary.tasksCapability = client.getServerCapabilities()?.tasks ?? null;

const tools = await attempt(() => client.listTools({}, { timeout }));
if (tools.error) summary.errors.push({ step: "tools/list", ...tools.error });
for (const t of tools.value?.tools ?? []) summary.toolSupport[t.name] = t.execution?.taskSupport ?? null;

// stream runs one tool as a task with callToolStream and records what it
// yielded, then reads the ended task with tasks/get and tasks/result.
async function stream(name, args) {
  const rec = { types: [], statuses: [], taskId: null, created: null, result: null, error: null };
  summary.streams[name] = rec;
  try {
    const it = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
      task: { ttl: 60000 },
      timeout,
    });
    for await (const m of it) {
      rec.types.push(m.type);
      if (m.type === "taskCreated") {
        rec.taskId = m.task.taskId;
        rec.created = m.task;
        summary.created.push(m.task.taskId);
      } else if (m.type === "taskStatus") {
        rec.statuses.push(m.task.status);
      } else if (m.type === "result") {
        rec.result = m.result;
      } else if (m.type === "error") {
        rec.error = errInfo(m.error);
      }
    }
  } catch (e) {
    rec.error = errInfo(e);
  }
  if (rec.taskId) {
    const got = await attempt(() => client.experimental.tasks.getTask(rec.taskId, { timeout }));
    rec.get = got.value ?? null;
    rec.getError = got.error ?? null;
    const res = await attempt(() => client.experimental.tasks.getTaskResult(rec.taskId, CallToolResultSchema, { timeout }));
    rec.payload = res.value ?? null;
    rec.payloadError = res.error ?? null;
  }
}

await stream("slow_compute", { seconds: 0.2, label: "ts" });
await stream("confirm_delete", { filename: "notes.txt" });
await stream("multi_input", {});
await stream("failing_job", {});
await stream("protocol_error_job", {});
await stream("test_tool_with_task", {});

// The cancel scenario, with plain requests.
{
  const c = summary.cancel;
  const created = await attempt(() =>
    client.request({ method: "tools/call", params: { name: "slow_compute", arguments: { seconds: 60, label: "cancelled" } } }, CreateTaskResultSchema, {
      task: { ttl: 60000 },
      timeout,
    }),
  );
  c.create = created.value ?? null;
  c.createError = created.error ?? null;
  const id = created.value?.task?.taskId;
  if (id) {
    summary.created.push(id);
    const tasks = client.experimental.tasks;
    const before = await attempt(() => tasks.getTask(id, { timeout }));
    c.before = before.value?.status ?? before.error;
    const listed = await attempt(() => tasks.listTasks(undefined, { timeout }));
    c.listedWhileRunning = listed.value ? listed.value.tasks.some((t) => t.taskId === id) : listed.error;
    const cancelled = await attempt(() => tasks.cancelTask(id, { timeout }));
    c.cancelResult = cancelled.value ?? null;
    c.cancelError = cancelled.error ?? null;
    const after = await attempt(() => tasks.getTask(id, { timeout }));
    c.after = after.value ?? null;
    c.afterError = after.error ?? null;
    const again = await attempt(() => tasks.cancelTask(id, { timeout }));
    c.againError = again.error ?? null;
    const payload = await attempt(() => tasks.getTaskResult(id, CallToolResultSchema, { timeout }));
    c.payload = payload.value ?? null;
    c.payloadError = payload.error ?? null;
  }
}

// Refusals.
{
  const r = summary.refusals;
  const tasks = client.experimental.tasks;
  const outcome = async (fn) => {
    const a = await attempt(fn);
    return a.error ?? { code: null, message: "no error: " + JSON.stringify(a.value) };
  };
  r.requiredWithoutTask = await outcome(() =>
    client.request({ method: "tools/call", params: { name: "failing_job", arguments: {} } }, CallToolResultSchema, { timeout }),
  );
  r.requiredWithoutTaskClientSide = await outcome(() => client.callTool({ name: "failing_job", arguments: {} }, CallToolResultSchema, { timeout }));
  r.forbiddenWithTask = await outcome(() =>
    client.request({ method: "tools/call", params: { name: "greet", arguments: { name: "x" } } }, CreateTaskResultSchema, { task: {}, timeout }),
  );
  r.getUnknown = await outcome(() => tasks.getTask("no-such-task", { timeout }));
  r.resultUnknown = await outcome(() => tasks.getTaskResult("no-such-task", CallToolResultSchema, { timeout }));
  r.cancelUnknown = await outcome(() => tasks.cancelTask("no-such-task", { timeout }));
  r.listBadCursor = await outcome(() => tasks.listTasks("not-a-cursor", { timeout }));
}

// Every task listed, all pages.
{
  let cursor;
  const seen = new Set();
  for (;;) {
    const page = await attempt(() => client.experimental.tasks.listTasks(cursor, { timeout }));
    if (page.error) {
      summary.errors.push({ step: "tasks/list", ...page.error });
      break;
    }
    for (const t of page.value.tasks) summary.listed.push({ taskId: t.taskId, status: t.status });
    cursor = page.value.nextCursor;
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
}

console.log(JSON.stringify(summary));
await client.close().catch(() => {});
process.exit(0);
