// ts_auth_server.mjs serves MCP with the official TypeScript SDK v2 server
// (@modelcontextprotocol/server) as an OAuth protected resource, for
// mcpkit's interop test auth_test.go, which logs mcpkit's client in to it
// through mcpkit's test authorization server (auth/authtest).
//
// Usage: node ts_auth_server.mjs <issuer URL>
//
// Environment: MCPKIT_INTROSPECTION_CLIENT_ID and
// MCPKIT_INTROSPECTION_CLIENT_SECRET, when set, are the credentials the
// server authenticates its introspection requests with (HTTP Basic);
// when unset it sends none. They travel in the environment, not on the
// command line.
//
// On start the script reads the authorization server's metadata (RFC
// 8414) from the issuer, then serves Streamable HTTP with createMcpHandler
// on 127.0.0.1, on a port the system picks, and prints
// "listening on <URL>" on stdout once it accepts connections; <URL> is
// the MCP endpoint, /mcp, and also the resource identifier. In front of
// the handler, with the SDK's framework-free helpers:
//   - oauthMetadataResponse serves the Protected Resource Metadata
//     (RFC 9728) at /.well-known/oauth-protected-resource/mcp, naming the
//     issuer as the authorization server, and the issuer's metadata at
//     /.well-known/oauth-authorization-server;
//   - requireBearerAuth refuses a request without a valid bearer token
//     with 401 and a WWW-Authenticate challenge pointing at the metadata.
//     Its verifier asks the authorization server's introspection endpoint
//     (RFC 7662) about each token and reports the token's audience as its
//     resource, which must be this server's URL (expectedResource).
//
// The server offers three tools: whoami, which answers the subject of the
// request's token; token_info, which answers what the verifier reported
// of it as JSON (subject, issuer, client_id, scopes, resource); and
// admin_whoami, which answers "admin <subject>" but needs the scope
// interop:admin (the SDK's requireScopes scope challenge: a token without
// it is refused with 403 insufficient_scope naming it).

import { createServer } from "node:http";
import { Readable } from "node:stream";
import {
  McpServer,
  OAuthError,
  OAuthErrorCode,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  oauthMetadataResponse,
  requireBearerAuth,
  requireScopes,
} from "@modelcontextprotocol/server";

const issuer = process.argv[2];
if (!issuer) {
  console.error("usage: node ts_auth_server.mjs <issuer URL>");
  process.exit(2);
}

/** fetchTimeout bounds every request the script makes, in milliseconds. */
const fetchTimeout = 10000;

/**
 * serverMetadata reads the issuer's RFC 8414 metadata, at the well-known
 * URL the RFC builds from the issuer (the suffix inserted before its
 * path), and checks that it names the issuer.
 */
async function serverMetadata(issuer) {
  const u = new URL(issuer);
  const path = u.pathname === "/" ? "" : u.pathname.replace(/\/$/, "");
  const url = `${u.origin}/.well-known/oauth-authorization-server${path}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(fetchTimeout) });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  const md = await res.json();
  if (md.issuer !== issuer) throw new Error(`${url} names issuer ${md.issuer}, not ${issuer}`);
  if (!md.introspection_endpoint) throw new Error(`${url} has no introspection_endpoint`);
  return md;
}

/**
 * introspectionVerifier is an OAuthTokenVerifier asking the
 * introspection endpoint about each token. resource is this server's
 * URL: of a token for several audiences, the verifier reports this one
 * when it is among them, so that requireBearerAuth's expectedResource
 * check sees it.
 */
function introspectionVerifier(endpoint, resource) {
  const id = process.env.MCPKIT_INTROSPECTION_CLIENT_ID;
  const secret = process.env.MCPKIT_INTROSPECTION_CLIENT_SECRET ?? "";
  const headers = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (id) {
    const enc = (s) => encodeURIComponent(s);
    headers.authorization = `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64")}`;
  }
  return {
    async verifyAccessToken(token) {
      const res = await fetch(endpoint, {
        method: "POST",
        headers,
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
        signal: AbortSignal.timeout(fetchTimeout),
      });
      if (!res.ok) {
        // Never the token itself in an error.
        throw new OAuthError(OAuthErrorCode.ServerError, `introspection answered ${res.status}`);
      }
      const info = await res.json();
      if (info.active !== true) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, "Token is not active");
      }
      // An active refresh token is no access token.
      if (info.token_type !== undefined && String(info.token_type).toLowerCase() !== "bearer") {
        throw new OAuthError(OAuthErrorCode.InvalidToken, "Token is not a bearer access token");
      }
      const aud = Array.isArray(info.aud) ? info.aud : info.aud ? [info.aud] : [];
      const same = (a) => a.replace(/\/$/, "") === resource.replace(/\/$/, "");
      const audience = aud.find(same) ?? aud[0];
      return {
        token,
        clientId: info.client_id ?? "",
        scopes: typeof info.scope === "string" && info.scope !== "" ? info.scope.split(" ") : [],
        expiresAt: typeof info.exp === "number" ? info.exp : undefined,
        resource: audience ? new URL(audience) : undefined,
        extra: { sub: info.sub, iss: info.iss },
      };
    },
  };
}

/** text is a tool result of one text block. */
const text = (s) => ({ content: [{ type: "text", text: s }] });

/** newServer builds the server each request is served by. */
function newServer() {
  const server = new McpServer(
    { name: "ts-v2-interop-auth-server", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.registerTool("whoami", { description: "Answers the subject of the request's access token." }, async (ctx) =>
    text(String(ctx.http?.authInfo?.extra?.sub ?? "")),
  );
  server.registerTool("token_info", { description: "Answers what the verifier said of the request's access token." }, async (ctx) => {
    const a = ctx.http?.authInfo;
    return text(
      JSON.stringify({
        subject: a?.extra?.sub ?? "",
        issuer: a?.extra?.iss ?? "",
        client_id: a?.clientId ?? "",
        scopes: a?.scopes ?? [],
        resource: a?.resource?.href ?? "",
      }),
    );
  });
  server.registerTool(
    "admin_whoami",
    {
      description: "Answers the subject too, but only to a token with the scope interop:admin.",
      scopeChallenge: requireScopes("interop:admin"),
    },
    async (ctx) => text(`admin ${String(ctx.http?.authInfo?.extra?.sub ?? "")}`),
  );
  return server;
}

/** toRequest converts a node:http request into a web-standard Request. */
function toRequest(req, res) {
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
  return new Request(url, {
    method: req.method,
    headers,
    body: hasBody ? Readable.toWeb(req) : undefined,
    duplex: hasBody ? "half" : undefined,
    signal: abort.signal,
  });
}

const metadata = await serverMetadata(issuer);
const handler = createMcpHandler(newServer, {
  onerror: (err) => console.error("ts_auth_server:", err?.message ?? err),
});
let fetchHandler; // set once the port, and so the resource URL, is known

const http = createServer(async (req, res) => {
  try {
    const response = await fetchHandler(toRequest(req, res));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.flushHeaders();
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (err) {
    console.error("ts_auth_server:", err);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
http.listen(0, "127.0.0.1", () => {
  const { address, port } = http.address();
  const resource = `http://${address}:${port}/mcp`;
  const metadataOptions = {
    oauthMetadata: metadata,
    resourceServerUrl: new URL(resource),
    resourceName: "ts-v2-interop-auth-server",
  };
  const gate = requireBearerAuth({
    verifier: introspectionVerifier(metadata.introspection_endpoint, resource),
    expectedResource: new URL(resource),
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(resource)),
  });
  fetchHandler = async (request) => {
    const doc = oauthMetadataResponse(request, metadataOptions);
    if (doc) return doc;
    if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    const auth = await gate(request);
    if (auth instanceof Response) return auth;
    return handler.fetch(request, { authInfo: auth });
  };
  console.log(`listening on ${resource}`);
});
