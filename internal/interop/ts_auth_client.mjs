// ts_auth_client.mjs logs in to a protected MCP server with the official
// TypeScript SDK v2 client (@modelcontextprotocol/client), calls its
// whoami tool, and prints a JSON summary on stdout. mcpkit's interop test
// auth_test.go runs it against mcpkit's server behind the auth
// middleware, with mcpkit's test authorization server (auth/authtest).
//
// Usage: node ts_auth_client.mjs <Streamable HTTP URL> legacy|2026-07-28 [bearer|dpop]
//
// The second argument picks the era: "legacy" is the initialize
// handshake, a version the client pins (versionNegotiation
// { pin: version }) the 2026-07-28 era with server/discover. The third
// picks the tokens: bearer tokens (the default), or, with "dpop", tokens
// bound to a DPoP key (RFC 9449) of a DpopSession the provider's dpop()
// returns, which the SDK then proves possession of at the token endpoint
// and on every request to the MCP server, answering use_dpop_nonce
// challenges of either.
//
// The client's OAuthClientProvider keeps everything in memory. The SDK
// does the OAuth work: on the server's 401 it reads the Protected Resource
// Metadata, finds the authorization server, registers the client
// dynamically and builds the authorization request (PKCE S256, state,
// resource). Its redirectToAuthorization plays the user agent headless:
// it fetches the authorization URL without following redirects (the test
// authorization server consents at once and redirects to the redirect
// URI) and keeps the callback's parameters. The first connect then fails
// with UnauthorizedError, as the SDK intends for interactive flows; the
// script checks the callback's state, hands its parameters to
// transport.finishAuth (which checks iss and redeems the code with the
// PKCE verifier), and connects again with a new transport, now with a
// token.
//
// When the server lists a tool admin_whoami, the script calls it too.
// If the server refuses the call for want of a scope (403
// insufficient_scope), the SDK starts a new authorization with the union
// of the scopes (step-up), which the script completes as the first one,
// and calls the tool again.
//
// The summary says what happened at each step; no token, code or
// verifier is ever printed.

import { Client, DpopSession, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const [serverURL, era, tokens = "bearer"] = process.argv.slice(2);
if (!serverURL || !era || (tokens !== "bearer" && tokens !== "dpop")) {
  console.error("usage: node ts_auth_client.mjs <URL> legacy|<version> [bearer|dpop]");
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error("ts_auth_client: timed out");
  process.exit(3);
}, 30000);

// The redirect URI the client registers. Nothing listens there: the
// script reads the redirect instead of following it.
const redirectURL = "http://127.0.0.1/callback";

const summary = {
  authorizationRequests: 0, // redirectToAuthorization calls
  errors: {},
};

/** An OAuthClientProvider holding its state in memory. */
class MemoryProvider {
  #client;
  #tokens;
  #verifier;
  #discovery;
  #state;
  #dpop;
  callback; // URLSearchParams of the last authorization response

  constructor(dpop) {
    this.#dpop = dpop;
  }

  get redirectUrl() {
    return redirectURL;
  }
  get clientMetadata() {
    return {
      client_name: "ts-v2-interop-oauth",
      redirect_uris: [redirectURL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    this.#state = crypto.randomUUID();
    return this.#state;
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info) {
    this.#client = info;
    summary.clientRegistered = typeof info.client_id === "string" && info.client_id !== "";
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens) {
    this.#tokens = tokens;
    summary.tokenType = tokens.token_type;
    summary.refreshToken = typeof tokens.refresh_token === "string";
  }
  saveCodeVerifier(v) {
    this.#verifier = v;
  }
  codeVerifier() {
    return this.#verifier;
  }
  saveDiscoveryState(s) {
    this.#discovery = s;
    summary.authorizationServer = s.authorizationServerUrl;
    summary.resource = s.resourceMetadata?.resource;
  }
  discoveryState() {
    return this.#discovery;
  }
  dpop() {
    return this.#dpop;
  }

  /**
   * redirectToAuthorization is the headless user agent: it sends the
   * authorization request and reads the redirect the server answers with.
   */
  async redirectToAuthorization(url) {
    summary.authorizationRequests++;
    this.callback = undefined;
    const p = url.searchParams;
    const request = {
      responseType: p.get("response_type"),
      codeChallengeMethod: p.get("code_challenge_method"),
      codeChallenge: (p.get("code_challenge") ?? "") !== "",
      state: (p.get("state") ?? "") !== "",
      redirectURI: p.get("redirect_uri"),
      resource: p.get("resource"),
      scope: p.get("scope"),
    };
    if (summary.authorizationRequest === undefined) summary.authorizationRequest = request;
    else summary.stepUpRequest = request;
    const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10000) });
    const location = res.headers.get("location");
    if (res.status < 300 || res.status > 399 || !location) {
      throw new Error(`authorization endpoint answered ${res.status} without a redirect`);
    }
    const back = new URL(location, url);
    if (`${back.origin}${back.pathname}` !== redirectURL) {
      throw new Error(`redirected to ${back.origin}${back.pathname}, not to the redirect URI`);
    }
    this.callback = back.searchParams;
  }

  /** checkState reports whether the callback carries the state sent. */
  checkState() {
    return this.callback?.get("state") === this.#state;
  }

  /** describeCallback summarises the callback without its code. */
  describeCallback() {
    return {
      code: (this.callback?.get("code") ?? "") !== "",
      iss: this.callback?.get("iss"),
      stateMatches: this.checkState(),
      error: this.callback?.get("error"),
    };
  }
}

const versionNegotiation = era === "legacy" ? { mode: "legacy" } : { mode: { pin: era } };
const newClient = () => new Client({ name: "ts-v2-interop-oauth", version: "1.0.0" }, { versionNegotiation });
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const dpop = tokens === "dpop" ? await DpopSession.create() : undefined;
summary.dpopThumbprint = dpop?.thumbprint;
const provider = new MemoryProvider(dpop);
let client;
try {
  // First connection: no token; the server's 401 starts the flow.
  const first = new StreamableHTTPClientTransport(new URL(serverURL), { authProvider: provider });
  client = newClient();
  try {
    await client.connect(first);
    summary.firstConnect = "connected without authorization";
  } catch (e) {
    summary.firstConnect = e instanceof UnauthorizedError ? "UnauthorizedError" : String(e?.stack ?? e);
  }
  await client.close().catch(() => {});
  if (!provider.callback) throw new Error("the flow did not reach the authorization endpoint");
  summary.callback = provider.describeCallback();
  if (!summary.callback.stateMatches) throw new Error("the callback's state differs from the request's");
  await first.finishAuth(provider.callback);

  // Second connection: the token is sent from the first request on.
  client = newClient();
  const second = new StreamableHTTPClientTransport(new URL(serverURL), { authProvider: provider });
  await client.connect(second);
  summary.protocolVersion = client.getNegotiatedProtocolVersion();
  summary.whoami = text(await client.callTool({ name: "whoami", arguments: {} }));

  // Step-up: a tool that needs a scope the token lacks is refused with
  // 403 insufficient_scope. The transport asks for a new authorization
  // with the union of the scopes, which needs the user again: the call
  // fails with UnauthorizedError, and succeeds after finishAuth.
  const tools = (await client.listTools()).tools.map((t) => t.name);
  if (tools.includes("admin_whoami")) {
    const call = () => client.callTool({ name: "admin_whoami", arguments: {} });
    try {
      summary.admin = text(await call());
      summary.stepUp = "no step-up";
    } catch (e) {
      if (!(e instanceof UnauthorizedError) || !provider.callback) throw e;
      summary.stepUp = "UnauthorizedError";
      summary.stepUpCallback = provider.describeCallback();
      if (!summary.stepUpCallback.stateMatches) throw new Error("the step-up callback's state differs from the request's");
      await second.finishAuth(provider.callback);
      summary.admin = text(await call());
    }
  }
} catch (e) {
  summary.errors.flow = String(e?.stack ?? e);
}
console.log(JSON.stringify(summary));
clearTimeout(watchdog);
await client?.close().catch(() => {});
process.exit(0);
