//! One MCP server's OAuth client: the [`mcpclient::HttpAuth`] of its HTTP transport.
//!
//! It gives each request the stored access token, refreshed first when it is about to expire.
//! A 401 is answered by a refresh, else by a new grant: the client-credentials grant when the
//! config says so, else a login through the browser when a person can be asked
//! ([`Interaction`]), else [`AuthError::LoginRequired`]. A `403 insufficient_scope` asks for the
//! union of the scopes asked before and the challenged ones, [`MAX_STEP_UPS`] times at most.
//! One lock serializes all of it, so concurrent 401s start one login, not many.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpclient::{AuthFailure, AuthHeader, AuthTarget, BoxFuture, HttpAuth, Refusal};
use url::Url;

use crate::assertion_source::Assertion;
use crate::clock::now;
use crate::discovery::canonical;
use crate::dpop::{DpopKey, DPOP_ALGORITHM, DPOP_SCHEME, USE_DPOP_NONCE};
use crate::fetch::Dpop;
use crate::store::{client_key, load, save, tokens_key};
use crate::token;
use crate::{
    discover, AuthError, Challenge, ClientRecord, Discovery, Loopback, PrivateKey, Secret, Store,
    TokenRecord,
};

/// Most scope step-ups one authorizer attempts: with the first login, three authorization
/// requests at most for a server that keeps refusing.
pub const MAX_STEP_UPS: u32 = 2;

/// Most new grants one authorizer obtains after 401s: a server that refuses every new token
/// is not asked again and again.
pub const MAX_GRANTS: u32 = 2;

/// An access token this close to its expiry is refreshed before it is used.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// The scope that asks for a refresh token, requested when the authorization server lists it.
const OFFLINE_ACCESS: &str = "offline_access";

/// Which grant obtains tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Grant {
    /// A person logs in through the browser (authorization code with PKCE).
    #[default]
    AuthorizationCode,
    /// The client's own credentials from the config (machine to machine).
    ClientCredentials,
    /// A JWT the workload was given (workload identity federation), as the grant itself
    /// (RFC 7523 §2.1).
    JwtBearer,
}

/// The `auth` section of a server in the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// A pre-registered client id.
    pub client_id: Option<String>,
    /// Its secret.
    pub client_secret: Option<Secret>,
    /// Its private key, for `private_key_jwt` authentication in place of a secret.
    pub private_key: Option<PrivateKey>,
    /// The scopes to ask for; when absent, the server's challenge or metadata says.
    pub scopes: Option<Vec<String>>,
    /// Which grant.
    pub grant: Grant,
    /// The HTTPS URL of mcpx's Client ID Metadata Document, used where the authorization
    /// server supports them.
    pub client_metadata_url: Option<String>,
    /// The JWT of the JWT-bearer grant, or where to get it.
    pub assertion: Option<Assertion>,
}

/// Whether a person can be asked to log in, and how the login URL reaches them.
#[derive(Clone)]
pub enum Interaction {
    /// Yes: the authorization URL is handed to this (to print it and open a browser).
    Browser(Arc<dyn Fn(&str) + Send + Sync>),
    /// No: a needed login is [`AuthError::LoginRequired`].
    Never,
}

/// What is stored for a server, for `auth status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The authorization server that granted the tokens.
    pub issuer: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// When the access token expires (Unix seconds), when known.
    pub expires_at: Option<u64>,
    /// A refresh token is kept.
    pub refreshable: bool,
}

/// The OAuth client of one MCP server.
pub struct Authorizer {
    url: Url,
    config: AuthConfig,
    store: Arc<dyn Store>,
    interaction: Interaction,
    http: reqwest::Client,
    state: tokio::sync::Mutex<State>,
    /// Changes whenever the tokens do ([`AuthHeader::stamp`]).
    stamp: AtomicU64,
    /// The authorization server's latest DPoP nonce.
    as_nonce: std::sync::Mutex<Option<String>>,
}

#[derive(Default)]
struct State {
    loaded: bool,
    tokens: Option<TokenRecord>,
    discovery: Option<Discovery>,
    step_ups: u32,
    grants: u32,
    /// The DPoP key new tokens are bound to, when the authorization server offers DPoP.
    dpop: Option<Arc<DpopKey>>,
    /// The MCP server's latest DPoP nonce.
    rs_nonce: Option<String>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("url", &self.url.as_str())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// The client of the MCP endpoint `url`.
    ///
    /// # Errors
    /// [`AuthError::Discovery`] for a URL that does not parse.
    pub fn new(
        url: &str,
        config: AuthConfig,
        store: Arc<dyn Store>,
        interaction: Interaction,
    ) -> Result<Authorizer, AuthError> {
        let url = Url::parse(url).map_err(|e| AuthError::Discovery {
            url: url.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Authorizer {
            url,
            config,
            store,
            interaction,
            http: crate::fetch::client()?,
            state: tokio::sync::Mutex::default(),
            stamp: AtomicU64::new(0),
            as_nonce: std::sync::Mutex::default(),
        })
    }

    fn key(&self) -> String {
        tokens_key(&canonical(&self.url))
    }

    /// What is stored for this server; `None` when it has no tokens.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub fn status(&self) -> Result<Option<Status>, AuthError> {
        let tokens: Option<TokenRecord> = load(self.store.as_ref(), &self.key())?;
        Ok(tokens.map(|t| Status {
            issuer: t.issuer,
            scopes: t.scopes,
            expires_at: t.expires_at,
            refreshable: t.refresh_token.is_some(),
        }))
    }

    /// Forgets this server's tokens; whether there were any.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub fn logout(&self) -> Result<bool, AuthError> {
        let had = self.store.get(&self.key())?.is_some();
        self.store.delete(&self.key())?;
        Ok(had)
    }

    /// Logs in now, whatever is stored: asks the server for its challenge, discovers its
    /// authorization server and obtains tokens. `false` when the server asks for none.
    ///
    /// # Errors
    /// Any [`AuthError`] of discovery, registration, the login or the token request.
    pub async fn login(&self) -> Result<bool, AuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state)?;
        let challenge = self.probe().await;
        let Some(challenge) = challenge else {
            return Ok(false);
        };
        let wanted = state
            .tokens
            .as_ref()
            .map(|t| t.scopes.clone())
            .unwrap_or_default();
        state.discovery = None;
        self.obtain(&mut state, Some(&challenge), wanted).await?;
        Ok(true)
    }

    /// The server's `Bearer` challenge to a request without credentials; `None` when it
    /// answers without one.
    async fn probe(&self) -> Option<Challenge> {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": "mcpx-auth-probe", "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "mcpx", "version": env!("CARGO_PKG_VERSION")}}});
        let response = self
            .http
            .post(self.url.clone())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            .ok()?;
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            return None;
        }
        Some(
            response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(Challenge::parse)
                .unwrap_or_default(),
        )
    }

    fn load(&self, state: &mut State) -> Result<(), AuthError> {
        if !state.loaded {
            state.tokens = load(self.store.as_ref(), &self.key())?;
            state.loaded = true;
        }
        Ok(())
    }

    fn keep(&self, state: &mut State, tokens: TokenRecord) -> Result<(), AuthError> {
        save(self.store.as_ref(), &self.key(), &tokens)?;
        state.tokens = Some(tokens);
        self.stamp.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn discovery(
        &self,
        state: &mut State,
        challenge: Option<&Challenge>,
    ) -> Result<Discovery, AuthError> {
        let fresh = challenge.is_some_and(|c| c.resource_metadata.is_some());
        match &state.discovery {
            Some(discovery) if !fresh => Ok(discovery.clone()),
            _ => {
                let discovery = discover(&self.http, self.url.as_str(), challenge).await?;
                state.discovery = Some(discovery.clone());
                Ok(discovery)
            }
        }
    }

    /// Refreshes the tokens; `false` when there is no refresh token or the server refused it
    /// (the tokens are then dropped).
    async fn refresh(&self, state: &mut State) -> Result<bool, AuthError> {
        let Some(tokens) = state.tokens.clone() else {
            return Ok(false);
        };
        let Some(refresh) = &tokens.refresh_token else {
            return Ok(false);
        };
        let discovery = self.discovery(state, None).await?;
        if discovery.server.issuer != tokens.issuer {
            state.tokens = None;
            return Ok(false);
        }
        let client = self.stored_client(&discovery)?.unwrap_or(ClientRecord {
            issuer: tokens.issuer.clone(),
            client_id: tokens.client_id.clone(),
            client_secret: None,
            auth_method: None,
            private_key: None,
        });
        let key = self.dpop_key(state, &discovery, None)?;
        let dpop = key.as_deref().map(|key| Dpop {
            key,
            nonce: &self.as_nonce,
        });
        let answer = token::request(
            &self.http,
            &discovery.server,
            &client,
            token::Grant::Refresh(refresh),
            &discovery.resource,
            &[],
            dpop,
        )
        .await;
        match answer {
            Ok(mut fresh) => {
                if fresh.refresh_token.is_none() {
                    fresh.refresh_token = tokens.refresh_token.clone();
                }
                if fresh.scopes.is_empty() {
                    fresh.scopes = tokens.scopes.clone();
                }
                self.keep(state, fresh)?;
                Ok(true)
            }
            Err(error) => {
                tracing::info!(%error, "refresh refused; a new grant is needed");
                state.tokens = None;
                self.store.delete(&self.key())?;
                self.stamp.fetch_add(1, Ordering::Relaxed);
                Ok(false)
            }
        }
    }

    /// The DPoP key for token requests: the one the current tokens are bound to, else the one
    /// made before, else a new one; `None` when the authorization server offers no DPoP in
    /// mcpx's algorithm, or the MCP server shows no sign of taking DPoP-bound tokens (a `DPoP`
    /// challenge, DPoP in its resource metadata, or tokens already bound).
    fn dpop_key(
        &self,
        state: &mut State,
        discovery: &Discovery,
        challenge: Option<&Challenge>,
    ) -> Result<Option<Arc<DpopKey>>, AuthError> {
        let offered = discovery
            .server
            .dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == DPOP_ALGORITHM));
        let bound = state
            .tokens
            .as_ref()
            .and_then(|t| t.dpop_key.as_ref())
            .and_then(DpopKey::from_secret);
        let resource_takes = bound.is_some()
            || challenge.is_some_and(|c| c.dpop)
            || discovery.resource_metadata.as_ref().is_some_and(|m| {
                m.dpop_bound_access_tokens_required || m.dpop_signing_alg_values_supported.is_some()
            });
        if !offered || !resource_takes {
            return Ok(None);
        }
        match (bound, &state.dpop) {
            (Some(key), _) => state.dpop = Some(Arc::new(key)),
            (None, Some(_)) => {}
            (None, None) => state.dpop = Some(Arc::new(DpopKey::generate()?)),
        }
        Ok(state.dpop.clone())
    }

    /// The client identity kept or configured for the discovered authorization server.
    fn stored_client(&self, discovery: &Discovery) -> Result<Option<ClientRecord>, AuthError> {
        let issuer = &discovery.server.issuer;
        if let Some(id) = &self.config.client_id {
            return Ok(Some(ClientRecord {
                issuer: issuer.clone(),
                client_id: id.clone(),
                client_secret: self.config.client_secret.clone(),
                auth_method: None,
                private_key: self.config.private_key.clone(),
            }));
        }
        if let (true, Some(url)) = (
            discovery.server.client_id_metadata_document_supported,
            &self.config.client_metadata_url,
        ) {
            return Ok(Some(ClientRecord {
                issuer: issuer.clone(),
                client_id: url.clone(),
                client_secret: None,
                auth_method: Some("none".to_owned()),
                private_key: None,
            }));
        }
        let kept: Option<ClientRecord> = load(self.store.as_ref(), &client_key(issuer))?;
        Ok(kept.filter(|c| &c.issuer == issuer))
    }

    /// Obtains new tokens with `wanted` scopes added to the ones the challenge, the config or
    /// the metadata name.
    async fn obtain(
        &self,
        state: &mut State,
        challenge: Option<&Challenge>,
        wanted: Vec<String>,
    ) -> Result<(), AuthError> {
        let discovery = self.discovery(state, challenge).await?;
        let mut scopes = match (&self.config.scopes, challenge.map(Challenge::scopes)) {
            (Some(scopes), _) => scopes.clone(),
            (None, Some(challenged)) if !challenged.is_empty() => challenged,
            _ => discovery
                .resource_metadata
                .as_ref()
                .and_then(|m| m.scopes_supported.clone())
                .unwrap_or_default(),
        };
        for scope in wanted {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        let key = self.dpop_key(state, &discovery, challenge)?;
        let dpop = key.as_deref().map(|key| Dpop {
            key,
            nonce: &self.as_nonce,
        });
        let tokens = match self.config.grant {
            Grant::ClientCredentials => {
                let client = self.stored_client(&discovery)?.ok_or_else(|| AuthError::NoClient {
                    issuer: discovery.server.issuer.clone(),
                    message: "the client-credentials grant needs `auth.clientId` and `auth.clientSecret` or `auth.privateKey`".to_owned(),
                })?;
                token::request(
                    &self.http,
                    &discovery.server,
                    &client,
                    token::Grant::ClientCredentials,
                    &discovery.resource,
                    &scopes,
                    dpop,
                )
                .await?
            }
            Grant::JwtBearer => {
                let missing = |what: &str| AuthError::NoClient {
                    issuer: discovery.server.issuer.clone(),
                    message: format!("the JWT-bearer grant needs {what}"),
                };
                let client = self
                    .stored_client(&discovery)?
                    .ok_or_else(|| missing("`auth.clientId`"))?;
                let assertion = self
                    .config
                    .assertion
                    .as_ref()
                    .ok_or_else(|| missing("`auth.assertion`, `auth.assertionFile` or `auth.idp`"))?
                    .read(&self.http, &discovery.server.issuer, &discovery.resource)
                    .await
                    .map_err(|message| AuthError::NoClient {
                        issuer: discovery.server.issuer.clone(),
                        message,
                    })?;
                token::request(
                    &self.http,
                    &discovery.server,
                    &client,
                    token::Grant::JwtBearer(&assertion),
                    &discovery.resource,
                    &scopes,
                    dpop,
                )
                .await?
            }
            Grant::AuthorizationCode => {
                let Interaction::Browser(show) = &self.interaction else {
                    if let Some(tokens) = state.tokens.as_mut() {
                        // Remembered for the login that follows.
                        tokens.scopes = scopes.clone();
                        let tokens = tokens.clone();
                        save(self.store.as_ref(), &self.key(), &tokens)?;
                    }
                    return Err(AuthError::LoginRequired {
                        reason: match challenge.and_then(|c| c.error.as_deref()) {
                            Some("insufficient_scope") => {
                                format!("the server needs the scopes `{}`", scopes.join(" "))
                            }
                            _ => format!("{} asks for authorization", canonical(&self.url)),
                        },
                    });
                };
                if discovery
                    .server
                    .scopes_supported
                    .as_ref()
                    .is_some_and(|s| s.iter().any(|s| s == OFFLINE_ACCESS))
                    && !scopes.iter().any(|s| s == OFFLINE_ACCESS)
                    && !scopes.is_empty()
                {
                    scopes.push(OFFLINE_ACCESS.to_owned());
                }
                self.browser_login(&discovery, &scopes, show.as_ref(), dpop)
                    .await?
            }
        };
        self.keep(state, tokens)
    }

    async fn browser_login(
        &self,
        discovery: &Discovery,
        scopes: &[String],
        show: &(dyn Fn(&str) + Send + Sync),
        dpop: Option<Dpop<'_>>,
    ) -> Result<TokenRecord, AuthError> {
        let server = &discovery.server;
        let loopback = Loopback::bind().await?;
        let redirect_uri = loopback.redirect_uri().to_owned();
        let (client, registered) = match self.stored_client(discovery)? {
            Some(client) => (client, false),
            None => {
                let client = crate::registration::register(
                    &self.http,
                    server,
                    &redirect_uri,
                    &["authorization_code", "refresh_token"],
                )
                .await?;
                (client, true)
            }
        };
        let request =
            token::authorization(server, &client, &redirect_uri, &discovery.resource, scopes)?;
        show(&request.url);
        let callback = loopback.wait().await?;
        // RFC 9207 §2.4, before anything in the answer is trusted, its error included.
        match &callback.iss {
            Some(iss) if iss != &server.issuer => {
                return Err(AuthError::Callback(format!(
                    "it names the issuer `{iss}`, not `{}`",
                    server.issuer
                )))
            }
            None if server.authorization_response_iss_parameter_supported => {
                return Err(AuthError::Callback(
                    "it has no `iss`, which the authorization server promises".to_owned(),
                ))
            }
            _ => {}
        }
        if callback.state.as_deref() != Some(request.state.as_str()) {
            return Err(AuthError::Callback(
                "its `state` is not the one sent".to_owned(),
            ));
        }
        if let Some(error) = &callback.error {
            let description = callback.error_description.as_deref().unwrap_or_default();
            return Err(AuthError::Callback(format!(
                "refused: {error} {description}"
            )));
        }
        let code = callback
            .code
            .ok_or_else(|| AuthError::Callback("it has no code".to_owned()))?;
        let tokens = token::request(
            &self.http,
            server,
            &client,
            token::Grant::Code {
                code,
                verifier: request.verifier,
                redirect_uri: &redirect_uri,
            },
            &discovery.resource,
            scopes,
            dpop,
        )
        .await?;
        // Kept only once it has worked: a failed login leaves nothing behind.
        if registered {
            save(self.store.as_ref(), &client_key(&server.issuer), &client)?;
        }
        Ok(tokens)
    }

    async fn header_now(&self, target: AuthTarget<'_>) -> Result<Option<AuthHeader>, AuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state)?;
        let expiring = state
            .tokens
            .as_ref()
            .and_then(|t| t.expires_at)
            .is_some_and(|at| at <= now() + REFRESH_MARGIN.as_secs());
        if expiring && !self.refresh(&mut state).await? {
            state.tokens = None;
        }
        let Some(tokens) = &state.tokens else {
            return Ok(None);
        };
        let stamp = self.stamp.load(Ordering::Relaxed);
        let token = tokens.access_token.expose();
        let Some(stored) = &tokens.dpop_key else {
            return Ok(Some(AuthHeader {
                value: format!("Bearer {token}"),
                dpop: None,
                stamp,
            }));
        };
        let Some(key) = DpopKey::from_secret(stored) else {
            // Tokens bound to a key that cannot be read are of no use: the request goes
            // without, and its 401 brings new ones.
            state.tokens = None;
            return Ok(None);
        };
        let proof = key.proof(
            target.method,
            target.url,
            Some(token),
            state.rs_nonce.as_deref(),
        )?;
        Ok(Some(AuthHeader {
            value: format!("{DPOP_SCHEME} {token}"),
            dpop: Some(proof),
            stamp,
        }))
    }

    async fn refused_now(&self, refusal: Refusal<'_>) -> Result<bool, AuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state)?;
        let current = self.stamp.load(Ordering::Relaxed);
        if refusal.stamp.is_some_and(|s| s != current) && state.tokens.is_some() {
            // Other credentials since the request was sent: it goes again with them.
            return Ok(true);
        }
        let challenge = refusal.challenge.and_then(Challenge::parse);
        // RFC 9449 §9: the server wants its nonce in the proof; the request goes again with it.
        let wants_nonce = challenge
            .as_ref()
            .is_some_and(|c| c.error.as_deref() == Some(USE_DPOP_NONCE));
        if let (401, true, Some(nonce)) = (refusal.status, wants_nonce, refusal.dpop_nonce) {
            if state.rs_nonce.as_deref() != Some(nonce) {
                state.rs_nonce = Some(nonce.to_owned());
                return Ok(true);
            }
        }
        match refusal.status {
            401 => {
                // Tokens stored since they were read (`mcpx auth login` in another process,
                // while a gateway waits for it): those first.
                let stored: Option<TokenRecord> = load(self.store.as_ref(), &self.key())?;
                if stored.is_some() && stored != state.tokens {
                    state.tokens = stored;
                    self.stamp.fetch_add(1, Ordering::Relaxed);
                    return Ok(true);
                }
                if refusal.stamp.is_some() && self.refresh(&mut state).await? {
                    return Ok(true);
                }
                if state.grants >= MAX_GRANTS {
                    return Ok(false);
                }
                state.grants += 1;
                self.obtain(&mut state, challenge.as_ref(), Vec::new())
                    .await?;
                Ok(true)
            }
            403 => {
                let Some(challenge) =
                    challenge.filter(|c| c.error.as_deref() == Some("insufficient_scope"))
                else {
                    return Ok(false);
                };
                if state.step_ups >= MAX_STEP_UPS {
                    return Ok(false);
                }
                state.step_ups += 1;
                let mut wanted = state
                    .tokens
                    .as_ref()
                    .map(|t| t.scopes.clone())
                    .unwrap_or_default();
                wanted.retain(|s| s != OFFLINE_ACCESS);
                wanted.extend(challenge.scopes());
                self.obtain(&mut state, Some(&challenge), wanted).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl HttpAuth for Authorizer {
    fn header<'a>(
        &'a self,
        target: AuthTarget<'a>,
    ) -> BoxFuture<'a, Result<Option<AuthHeader>, AuthFailure>> {
        Box::pin(async move { self.header_now(target).await.map_err(Into::into) })
    }

    fn refused<'a>(&'a self, refusal: Refusal<'a>) -> BoxFuture<'a, Result<bool, AuthFailure>> {
        Box::pin(async move { self.refused_now(refusal).await.map_err(Into::into) })
    }
}
