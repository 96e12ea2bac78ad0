// ts_v2_skills_server.mjs serves a folder of skills with the official
// TypeScript SDK v2 server's Skills extension
// (@modelcontextprotocol/server/ext/skills), for mcpkit's interop test
// ts_v2_skills_server_test.go, which reads them with mcpkit's skills
// client.
//
// Usage: node ts_v2_skills_server.mjs <stdio|http> <catalog|source|tampered> <skills folder>
//
// "stdio" serves one connection on standard input and output with
// serveStdio (the era picked from the connection's first message);
// "http" serves Streamable HTTP with createMcpHandler on 127.0.0.1, on a
// port the system picks, and prints "listening on <URL>" on stdout once
// it accepts connections (2026-07-28, and the stateless handshake-era
// fallback).
//
// "catalog" serves the SDK's own catalog of the folder (loadSkills): it
// declares directoryRead, pages skills/list and directory reads one
// entry at a time, and gives the cache hint ttlMs 60000, cacheScope
// public. "source" serves the same entries through a SkillSource of its
// own that has no readDirectory, so the server declares the extension
// without directoryRead (and default cache hints). "tampered" is "source"
// serving what a client must refuse: skills/get gives each entry with
// another description than its SKILL.md's, and two files differ from
// their entries: pdf-processing/references/FORMS.md has a byte more than
// its size, and acme/data/csv-tools/SKILL.md one byte changed (its size
// right, its digest wrong).

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";
import path from "node:path";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { SkillsExtension } from "@modelcontextprotocol/server/ext/skills";
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node";

const [kind, flavour, root] = process.argv.slice(2);
if (!["stdio", "http"].includes(kind) || !["catalog", "source", "tampered"].includes(flavour) || !root) {
  console.error("usage: node ts_v2_skills_server.mjs <stdio|http> <catalog|source|tampered> <skills folder>");
  process.exit(2);
}

const onWarning = (w) => console.error(`ts_v2_skills_server: warning: ${w.path}: ${w.message}`);
const catalog = await loadSkills(root, {
  pageSize: 1,
  cacheHint: { ttlMs: 60000, cacheScope: "public" },
  strict: true,
  onWarning,
});

/**
 * plainSource serves the catalog's entries without directory reads,
 * tampered with when tamper is set.
 */
function plainSource(entries, tamper) {
  const listed = new Set(entries.flatMap((e) => e.resources.map((r) => r.uri)));
  return {
    async list() {
      return { skills: [...entries] };
    },
    async get(uri) {
      const entry = entries.find((e) => e.uri === uri);
      if (!tamper || entry === undefined) return entry;
      return { ...entry, frontmatter: { ...entry.frontmatter, description: "Not what SKILL.md says." } };
    },
    async read(uri) {
      if (!listed.has(uri)) return undefined;
      const rel = uri.slice("skill://".length).split("/").map(decodeURIComponent);
      let text = (await readFile(path.join(root, ...rel))).toString("utf8");
      if (tamper && uri === "skill://pdf-processing/references/FORMS.md") text += "!";
      if (tamper && uri === "skill://acme/data/csv-tools/SKILL.md") text = text.replace("# CSV tools", "# CSV Tools");
      return { text, mimeType: rel.at(-1).endsWith(".md") ? "text/markdown" : "text/plain" };
    },
  };
}

const extension =
  flavour === "catalog"
    ? catalog
    : new SkillsExtension({ source: plainSource(catalog.entries, flavour === "tampered"), onWarning });

/** newServer builds the server every connection or request is served by. */
function newServer() {
  const server = new McpServer(
    { name: "ts-v2-skills-interop-server", version: "1.0.0" },
    { capabilities: { resources: {} } },
  );
  extension.attach(server);
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
      const response = await handler.fetch(
        new Request(url, {
          method: req.method,
          headers,
          body: hasBody ? Readable.toWeb(req) : undefined,
          duplex: hasBody ? "half" : undefined,
          signal: abort.signal,
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders();
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (err) {
      console.error("ts_v2_skills_server:", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  http.listen(0, "127.0.0.1", () => {
    const { address, port } = http.address();
    console.log(`listening on http://${address}:${port}/mcp`);
  });
}

const onerror = (err) => console.error("ts_v2_skills_server:", err?.message ?? err);
if (kind === "stdio") {
  serveStdio(newServer, { onerror });
} else {
  serveHTTP(createMcpHandler(newServer, { onerror }));
}
