//! Requests to the token endpoint, through `oauth2`: the code exchange with its PKCE verifier,
//! refresh, and the client-credentials grant, each with the `resource` indicator (RFC 8707) and
//! the client's authentication (none, its secret, or a signed assertion).

use crate::clock::now;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};

use crate::assertion::{self, ASSERTION_TYPE, PRIVATE_KEY_JWT};
use crate::dpop::DPOP_SCHEME;
use crate::fetch::Dpop;
use crate::{AuthError, ClientRecord, Secret, ServerMetadata, TokenRecord};

type Oauth = BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// What the token endpoint is asked for.
pub(crate) enum Grant<'a> {
    /// An authorization code, with the verifier of its challenge and the redirect it came to.
    Code {
        code: String,
        verifier: PkceCodeVerifier,
        redirect_uri: &'a str,
    },
    Refresh(&'a Secret),
    ClientCredentials,
    /// A JWT the client was given, as the grant itself (RFC 7523 §2.1).
    JwtBearer(&'a Secret),
}

/// The `grant_type` of the JWT-bearer grant (RFC 7523 §2.1).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

type Answer = Result<
    oauth2::basic::BasicTokenResponse,
    RequestTokenError<crate::fetch::HttpError, oauth2::basic::BasicErrorResponse>,
>;

/// The token request of [`jwt_bearer`].
fn jwt_bearer_request(
    server: &ServerMetadata,
    client: &ClientRecord,
    assertion: &Secret,
    extra: &[(&str, String)],
    scope: Option<&Scope>,
) -> Result<oauth2::HttpRequest, String> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", JWT_BEARER)
        .append_pair("assertion", assertion.expose());
    if let Some(scope) = scope {
        form.append_pair("scope", scope);
    }
    for (name, value) in extra {
        form.append_pair(name, value);
    }
    let mut request = oauth2::http::Request::builder()
        .method(oauth2::http::Method::POST)
        .uri(&server.token_endpoint)
        .header(
            oauth2::http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(oauth2::http::header::ACCEPT, "application/json");
    match (&client.client_secret, client.auth_method(server)) {
        (Some(secret), "client_secret_basic") => {
            use base64::Engine;
            let encode = |text: &str| {
                url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
            };
            let pair = format!("{}:{}", encode(&client.client_id), encode(secret.expose()));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header(
                oauth2::http::header::AUTHORIZATION,
                format!("Basic {basic}"),
            );
        }
        (Some(secret), "client_secret_post") => {
            form.append_pair("client_id", &client.client_id)
                .append_pair("client_secret", secret.expose());
        }
        _ => {
            form.append_pair("client_id", &client.client_id);
        }
    }
    request
        .body(form.finish().into_bytes())
        .map_err(|e| e.to_string())
}

/// The JWT-bearer grant, which `oauth2` does not build: the form made here, with the client's
/// authentication as `oauth2` sends it, and the answer read as `oauth2` reads its own.
async fn jwt_bearer(
    send: &crate::fetch::OauthHttp<'_>,
    server: &ServerMetadata,
    client: &ClientRecord,
    assertion: &Secret,
    extra: &[(&str, String)],
    scope: Option<&Scope>,
) -> Answer {
    let request = jwt_bearer_request(server, client, assertion, extra, scope)
        .map_err(RequestTokenError::Other)?;
    let response = oauth2::AsyncHttpClient::call(send, request)
        .await
        .map_err(RequestTokenError::Request)?;
    let status = response.status();
    if status.is_success() {
        serde_json::from_slice(response.body()).map_err(|e| {
            RequestTokenError::Other(format!("the answer is not a token response: {e}"))
        })
    } else {
        Err(match serde_json::from_slice(response.body()) {
            Ok(error) => RequestTokenError::ServerResponse(error),
            Err(_) => RequestTokenError::Other(format!("HTTP {status}")),
        })
    }
}

/// An authorization request, and what its answer is checked against.
pub(crate) struct Authorization {
    pub(crate) url: String,
    pub(crate) state: String,
    pub(crate) verifier: PkceCodeVerifier,
}

fn oauth(
    server: &ServerMetadata,
    client: &ClientRecord,
    redirect_uri: Option<&str>,
) -> Result<Oauth, AuthError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| AuthError::Metadata {
        url: server.issuer.clone(),
        message: format!("{what}: {e}"),
    };
    let mut oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_auth_uri(
            AuthUrl::new(server.authorization_endpoint.clone())
                .map_err(|e| bad("authorization_endpoint", &e))?,
        )
        .set_token_uri(
            TokenUrl::new(server.token_endpoint.clone()).map_err(|e| bad("token_endpoint", &e))?,
        );
    if let Some(uri) = redirect_uri {
        oauth = oauth.set_redirect_uri(
            RedirectUrl::new(uri.to_owned()).map_err(|e| bad("redirect_uri", &e))?,
        );
    }
    let method = client.auth_method(server);
    let with_secret = !matches!(method, "none" | PRIVATE_KEY_JWT);
    if let (Some(secret), true) = (&client.client_secret, with_secret) {
        oauth = oauth.set_client_secret(ClientSecret::new(secret.expose().to_owned()));
    }
    // An assertion goes in the body, beside the client id (RFC 7523 §2.2).
    Ok(oauth.set_auth_type(
        if matches!(method, "client_secret_post" | PRIVATE_KEY_JWT) {
            AuthType::RequestBody
        } else {
            AuthType::BasicAuth
        },
    ))
}

/// The URL that asks `server` to authorize `client` for `resource` with `scopes`.
pub(crate) fn authorization(
    server: &ServerMetadata,
    client: &ClientRecord,
    redirect_uri: &str,
    resource: &str,
    scopes: &[String],
) -> Result<Authorization, AuthError> {
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let oauth = oauth(server, client, Some(redirect_uri))?;
    let mut request = oauth
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", resource);
    if !scopes.is_empty() {
        request = request.add_scope(Scope::new(scopes.join(" ")));
    }
    let (url, state) = request.url();
    Ok(Authorization {
        url: url.to_string(),
        state: state.secret().clone(),
        verifier,
    })
}

/// Asks `server`'s token endpoint for tokens for `resource`.
///
/// # Errors
/// [`AuthError::Token`] with the server's error code and description, or what was wrong with
/// the exchange; never with a token.
pub(crate) async fn request(
    http: &reqwest::Client,
    server: &ServerMetadata,
    client: &ClientRecord,
    grant: Grant<'_>,
    resource: &str,
    scopes: &[String],
    dpop: Option<Dpop<'_>>,
) -> Result<TokenRecord, AuthError> {
    let send = crate::fetch::OauthHttp(http, dpop);
    let scope = (!scopes.is_empty()).then(|| Scope::new(scopes.join(" ")));
    let mut extra = vec![("resource", resource.to_owned())];
    if client.auth_method(server) == PRIVATE_KEY_JWT {
        let key = client.private_key.as_ref().ok_or_else(|| AuthError::NoClient {
            issuer: server.issuer.clone(),
            message: "the client authenticates with `private_key_jwt`: give `auth.privateKey` or `auth.privateKeyFile`".to_owned(),
        })?;
        extra.push(("client_assertion_type", ASSERTION_TYPE.to_owned()));
        extra.push((
            "client_assertion",
            assertion::sign(key, &client.client_id, server)?,
        ));
    }
    let answer = match grant {
        Grant::Code {
            code,
            verifier,
            redirect_uri,
        } => {
            let oauth = oauth(server, client, Some(redirect_uri))?;
            let mut request = oauth
                .exchange_code(AuthorizationCode::new(code))
                .set_pkce_verifier(verifier);
            for (name, value) in extra {
                request = request.add_extra_param(name, value);
            }
            request.request_async(&send).await
        }
        Grant::Refresh(token) => {
            let token = RefreshToken::new(token.expose().to_owned());
            let oauth = oauth(server, client, None)?;
            let mut request = oauth.exchange_refresh_token(&token);
            for (name, value) in extra {
                request = request.add_extra_param(name, value);
            }
            if let Some(scope) = scope {
                request = request.add_scope(scope);
            }
            request.request_async(&send).await
        }
        Grant::JwtBearer(assertion) => {
            jwt_bearer(&send, server, client, assertion, &extra, scope.as_ref()).await
        }
        Grant::ClientCredentials => {
            let oauth = oauth(server, client, None)?;
            let mut request = oauth.exchange_client_credentials();
            for (name, value) in extra {
                request = request.add_extra_param(name, value);
            }
            if let Some(scope) = scope {
                request = request.add_scope(scope);
            }
            request.request_async(&send).await
        }
    };
    let failed = |message: String| AuthError::Token {
        url: server.token_endpoint.clone(),
        message,
    };
    let token = answer.map_err(|e| {
        failed(match e {
            RequestTokenError::ServerResponse(answer) => match answer.error_description() {
                Some(description) => format!("{}: {description}", answer.error()),
                None => answer.error().to_string(),
            },
            RequestTokenError::Request(e) => e.to_string(),
            // The body is not quoted: it may hold a token.
            RequestTokenError::Parse(e, _) => format!("the answer is not a token response: {e}"),
            RequestTokenError::Other(message) => message,
        })
    })?;
    let granted = token
        .scopes()
        .map(|s| {
            s.iter()
                .flat_map(|scope| scope.split_ascii_whitespace())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|| scopes.to_vec());
    Ok(TokenRecord {
        issuer: server.issuer.clone(),
        client_id: client.client_id.clone(),
        access_token: Secret::new(token.access_token().secret().clone()),
        refresh_token: token
            .refresh_token()
            .map(|t| Secret::new(t.secret().clone())),
        expires_at: token.expires_in().map(|d| now() + d.as_secs()),
        scopes: granted,
        // Bound to the key only when the server says so: else it is a bearer token.
        dpop_key: dpop
            .filter(|_| {
                token
                    .token_type()
                    .as_ref()
                    .eq_ignore_ascii_case(DPOP_SCHEME)
            })
            .map(|d| d.key.to_secret()),
    })
}
