// ts_v2_skills_client.mjs drives an MCP server's skills with the official
// TypeScript SDK v2 client's Skills extension (SkillsClient from
// @modelcontextprotocol/client/ext/skills) and prints a JSON summary on
// stdout: every skill listed, got by its URI, every listed file read and
// verified (size, digest, and the frontmatter of SKILL.md), and every
// skill directory read. mcpkit's interop test (ts_v2_skills_test.go)
// runs it against mcpkit's conformance fixture server.
//
// Usage: node ts_v2_skills_client.mjs <auto|legacy> --url <Streamable HTTP URL>
//        node ts_v2_skills_client.mjs <auto|legacy> -- <server command> [args...]

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const [mode, ...argv] = process.argv.slice(2);
const watchdog = setTimeout(() => {
  console.error("ts_v2_skills_client: timed out");
  process.exit(3);
}, 30000);

const client = new Client({ name: "ts-v2-skills-interop", version: "1.0.0" }, { versionNegotiation: { mode } });
let transport;
if (argv[0] === "--url") {
  transport = new StreamableHTTPClientTransport(new URL(argv[1]));
} else if (argv[0] === "--") {
  transport = new StdioClientTransport({ command: argv[1], args: argv.slice(2), stderr: "ignore" });
} else {
  console.error("usage: node ts_v2_skills_client.mjs <auto|legacy> --url <URL> | -- <command> [args...]");
  process.exit(2);
}

const summary = { skills: [], verified: 0, unverified: 0, directories: 0, errors: {} };
try {
  await client.connect(transport);
  summary.protocolVersion = client.getNegotiatedProtocolVersion();
  const skills = new SkillsClient(client);
  summary.supported = skills.supported;
  summary.directoryRead = skills.directoryRead;
  const listing = await skills.list();
  summary.invalid = listing.invalid.length;
  for (const entry of listing.skills) {
    const name = String(entry.frontmatter?.name);
    summary.skills.push(name);
    try {
      const { skill } = await skills.get(entry.uri);
      const files = Array.isArray(skill.resources) ? skill.resources.map((r) => r.uri) : [skill.uri];
      for (const uri of files) {
        const f = await skills.read(skill, uri);
        if (f.verified) summary.verified++;
        else summary.unverified++;
      }
      if (skills.directoryRead) {
        const dir = entry.uri.replace(/\/SKILL\.md$/, "");
        await skills.readDirectory(dir);
        summary.directories++;
      }
    } catch (e) {
      summary.errors[name] = String(e?.message ?? e);
    }
  }
  summary.skills.sort();
} catch (e) {
  summary.errors.connect = String(e?.stack ?? e);
}
console.log(JSON.stringify(summary));
clearTimeout(watchdog);
await client.close().catch(() => {});
process.exit(0);
