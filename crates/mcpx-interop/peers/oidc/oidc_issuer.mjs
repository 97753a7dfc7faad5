// A real OAuth 2.1 / OpenID Connect authorization server for the interop tests: oidc-provider
// (pinned in package.json beside this file) on 127.0.0.1 with a free port. It issues access
// tokens as JWTs (RS256, signed with a key made at start) for any resource indicator on
// 127.0.0.1, so `mcpx serve --http` can be the resource server: by the client-credentials grant,
// and by the authorization code grant (PKCE, a loopback redirect on any port) with a refresh
// token. Its login approves at once: the interaction page logs the test user in and grants what
// was asked, as a person clicking "allow" would.
//
//   node oidc_issuer.mjs CLIENT_ID CLIENT_SECRET SCOPES [ACCESS_TOKEN_TTL [CLIENT_ID CLIENT_SECRET SCOPES]...]
//
// SCOPES (space-separated) are the ones the client may ask for; access tokens live
// ACCESS_TOKEN_TTL seconds (300 unless given). More clients may follow, three arguments each:
// each is a principal of its own (its client-credentials tokens name it in `client_id`), for
// tests with two users at once. Prints `listening 127.0.0.1:PORT` on stderr once it serves;
// its issuer is http://127.0.0.1:PORT.
import http from "node:http";
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair } from "jose";

const [clientId, clientSecret, firstScopes, ttl, ...more] = process.argv.slice(2);
if (!clientId || !clientSecret || !firstScopes || more.length % 3 !== 0) {
  console.error(
    "usage: oidc_issuer.mjs CLIENT_ID CLIENT_SECRET SCOPES [ACCESS_TOKEN_TTL [CLIENT_ID CLIENT_SECRET SCOPES]...]",
  );
  process.exit(2);
}
const accessTokenTTL = Number(ttl || 300);
const registered = [{ id: clientId, secret: clientSecret, scopes: firstScopes }];
for (let i = 0; i < more.length; i += 3) {
  registered.push({ id: more[i], secret: more[i + 1], scopes: more[i + 2] });
}
// Every scope any client may ask for (the resource server offers them all).
const scopes = [...new Set(registered.flatMap((c) => c.scopes.split(" ")))].join(" ");

const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: "interop-rs256", alg: "RS256", use: "sig" };

const provider = new Provider(issuer, {
  clients: registered.map((c) => ({
    client_id: c.id,
    client_secret: c.secret,
    grant_types: ["client_credentials", "authorization_code", "refresh_token"],
    // A native client: the loopback redirect matches on any port (RFC 8252 §7.3).
    application_type: "native",
    redirect_uris: ["http://127.0.0.1/callback"],
    response_types: ["code"],
    scope: c.scopes,
  })),
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
  jwks: { keys: [jwk] },
  scopes: scopes.split(" "),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (!new URL(resource).host.startsWith("127.0.0.1:")) {
          throw new Error(`not a loopback resource: ${resource}`);
        }
        return {
          scope: scopes,
          audience: resource,
          accessTokenTTL,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
});
provider.on("server_error", (_ctx, error) => console.error("server_error", error));

// The login page: the test user logs in and grants what the prompt says is missing.
async function approve(req, res) {
  const details = await provider.interactionDetails(req, res);
  const missing = details.prompt.details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: "interop-user", clientId: details.params.client_id });
  if (missing.missingOIDCScope) {
    grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  }
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(resource, scopes.join(" "));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: "interop-user" }, consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
}

const callback = provider.callback();
server.on("request", (req, res) => {
  if (req.url.startsWith("/interaction/")) {
    approve(req, res).catch((error) => {
      console.error("interaction", error);
      res.statusCode = 500;
      res.end(String(error));
    });
    return;
  }
  callback(req, res);
});
console.error(`listening 127.0.0.1:${port}`);
