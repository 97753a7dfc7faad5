// A real OAuth 2.1 / OpenID Connect authorization server for the interop tests: oidc-provider
// (pinned in package.json beside this file) on 127.0.0.1 with a free port. It issues
// client-credentials access tokens as JWTs (RS256, signed with a key made at start) for any
// resource indicator on 127.0.0.1, so `mcpx serve --http` can be the resource server.
//
//   node oidc_issuer.mjs CLIENT_ID CLIENT_SECRET SCOPES
//
// SCOPES (space-separated) are the ones the client may ask for. Prints `listening
// 127.0.0.1:PORT` on stderr once it serves; its issuer is http://127.0.0.1:PORT.
import http from "node:http";
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair } from "jose";

const [clientId, clientSecret, scopes] = process.argv.slice(2);
if (!clientId || !clientSecret || !scopes) {
  console.error("usage: oidc_issuer.mjs CLIENT_ID CLIENT_SECRET SCOPES");
  process.exit(2);
}

const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: "interop-rs256", alg: "RS256", use: "sig" };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      scope: scopes,
    },
  ],
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
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
});
provider.on("server_error", (_ctx, error) => console.error("server_error", error));

server.on("request", provider.callback());
console.error(`listening 127.0.0.1:${port}`);
