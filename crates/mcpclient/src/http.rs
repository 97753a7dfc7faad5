//! The Streamable HTTP transport (MCP 2025-03-26 and later).
//!
//! Every frame the client sends is one POST. A request's answer comes back as a JSON body or as
//! an SSE stream that may carry the server's own requests and notifications first. Each request
//! runs in a task of its own so that a long call holds up no other; what the exchanges yield is
//! queued for `receive`. Notifications and responses wait for the server's acknowledgement.
//!
//! The session: the `Mcp-Session-Id` the server gives with its `initialize` answer goes on every
//! later request, with `MCP-Protocol-Version` once the version is known. A 404 on a session
//! means the server forgot it: the transport replays the client's own `initialize` under an id
//! of its own (its answer goes to nobody), sends `notifications/initialized`, and sends the
//! frame again, once. After `notifications/initialized` a GET stream is opened for what the
//! server sends unprompted (a 405 means it offers none). A stream that ends before the answer
//! it carries is resumed by a GET with `Last-Event-ID` after the server's `retry` delay, as is
//! the GET stream; at most [`MAX_RESUMPTIONS`] times in a row without progress.
//!
//! A request is sent at most once. One that fails after hyper may have written a byte of it
//! (the connection closed or was reset before the answer) is never sent again: the server may
//! have received it, and hyper's error cannot tell. A stale keep-alive connection is made
//! harmless instead: before each request the runtime reads what arrived on idle connections
//! (`send`), so a close the server sent while the runtime was busy is seen before the pool
//! hands that connection out; a request hyper gives back unwritten, because its pooled
//! connection closed first, hyper-util sends on another connection (reqwest leaves its
//! `retry_canceled_requests` on): received once too. What is left is a close that crosses the
//! request on the wire, which [`POOL_IDLE_TIMEOUT`] keeps away.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode, Url};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::auth::{
    AuthTarget, HttpAuth, Refusal, DPOP_HEADER, DPOP_NONCE_HEADER, MAX_AUTH_RETRIES,
};
use crate::endpoint::{shown_url, Endpoint};
use crate::headers::{modern_headers, ToolHeaders};
use crate::sse::{sse_events, SseError};
use crate::{
    Frame, FrameError, FrameSink, FrameSource, Received, Transport, TransportError,
    MAX_FRAME_BYTES, MAX_QUEUED_FRAMES,
};

/// Most times in a row a stream is resumed, or the GET stream reopened, without an event
/// arriving in between.
pub const MAX_RESUMPTIONS: u32 = 5;

/// How long establishing a connection to the server may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a notification or response waits for the server's acknowledgement (the DELETE that
/// ends a session too).
pub const ACK_TIMEOUT: Duration = Duration::from_secs(30);

/// The wait before resuming a stream when the server named no `retry` delay.
pub const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// The longest `retry` delay a server may ask for; longer ones are cut to this.
pub const MAX_RETRY: Duration = Duration::from_secs(30);

/// Redirects followed, and only within the same origin, so that headers with secrets never
/// travel to another host.
pub const MAX_REDIRECTS: usize = 5;

/// Bytes of an error answer's body quoted in the error.
const ERROR_EXCERPT_BYTES: usize = 200;

/// How long an idle keep-alive connection is kept for the next request: below the 5 s after
/// which common servers (Node's `http`, uvicorn) close idle connections, so that a request is
/// not written to a connection the server is closing at that moment (a request that fails that
/// way cannot be told from one the server received, so it is never sent again).
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// How many times a 2026-07-28 request whose response stream broke before its answer is sent
/// again under a new id (that revision has no resumption: the request is lost with the stream).
pub const MAX_REISSUES: u32 = 1;

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_HEADER: HeaderName = HeaderName::from_static("last-event-id");

/// Where a Streamable HTTP server is: the `url` and `headers` of an `mcpServers` entry, and
/// what authorizes its requests when it needs OAuth. Its `Debug` shows the headers' names,
/// never their values (tokens), and only whether there is an `auth` provider.
#[derive(Clone, Default)]
pub struct HttpConfig {
    /// The MCP endpoint, `http://` or `https://`.
    pub url: String,
    /// Headers sent with every request (an `Authorization` token, say).
    pub headers: Vec<(String, String)>,
    /// What gives each request its `Authorization` header and is told of each 401 and 403
    /// ([`HttpAuth`]); `None` for a server that needs no OAuth.
    pub auth: Option<Arc<dyn HttpAuth>>,
}

impl PartialEq for HttpConfig {
    /// The same endpoint and headers, and the same provider (the one instance) or none.
    fn eq(&self, other: &HttpConfig) -> bool {
        self.url == other.url
            && self.headers == other.headers
            && match (&self.auth, &other.auth) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for HttpConfig {}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpConfig")
            .field(
                "url",
                &Url::parse(&self.url)
                    .map_or_else(|_| "(does not parse)".to_owned(), |u| shown_url(&u)),
            )
            .field("headers", &names)
            .field("auth", &self.auth.is_some())
            .finish()
    }
}

/// A connection to a Streamable HTTP server.
pub struct HttpTransport {
    sink: HttpSink,
    source: HttpSource,
}

/// The sending half of an [`HttpTransport`]: each frame is a POST of its own.
pub struct HttpSink {
    shared: Arc<Shared>,
}

/// The receiving half of an [`HttpTransport`]: what the exchanges and the GET stream yield.
pub struct HttpSource {
    incoming: mpsc::Receiver<Result<Received, TransportError>>,
}

struct Shared {
    client: reqwest::Client,
    url: Url,
    /// What errors and logs show of `url`, and the secrets it and `headers` hold.
    endpoint: Endpoint,
    headers: HeaderMap,
    session: Mutex<ServerSession>,
    /// Held while re-initializing, so that concurrent 404s start one new session, not many.
    reinitializing: tokio::sync::Mutex<()>,
    incoming: mpsc::Sender<Result<Received, TransportError>>,
    tasks: Mutex<JoinSet<()>>,
    /// The exchange of each request in flight, by its id (JSON text): cancelling the request
    /// stops it.
    requests: Mutex<std::collections::HashMap<String, tokio::task::AbortHandle>>,
    /// The `x-mcp-header` arguments of the listed tools, for 2026-07-28 requests.
    tool_headers: ToolHeaders,
    /// A 2026-07-28 request was sent: the server is modern, and a cancelled request is
    /// cancelled by closing its stream alone (no notification is posted).
    modern: AtomicBool,
    /// What authorizes each request, when the server needs it.
    auth: Option<Arc<dyn HttpAuth>>,
}

/// Why a request got no response.
enum SendError {
    Http(reqwest::Error),
    Auth(crate::AuthFailure),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Http(e) => e.fmt(f),
            SendError::Auth(e) => e.fmt(f),
        }
    }
}

/// The session the server gave (its `Mcp-Session-Id`), and what re-opening it takes.
#[derive(Default)]
struct ServerSession {
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
    /// The client's `initialize`, replayed when the server forgets the session.
    initialize: Option<Frame>,
    /// The id (JSON text) of the `initialize` whose answer names the protocol version.
    initialize_id: Option<String>,
    /// Counts sessions: a task that met a 404 re-initializes only if nobody did since.
    generation: u64,
    get_stream_open: bool,
}

impl HttpTransport {
    /// A transport for the server at `config.url`, its requests authorized by `config.auth`
    /// when given. Nothing is sent until the first frame.
    ///
    /// # Errors
    /// [`TransportError::Config`] for a URL that is not `http(s)://`, or a malformed header.
    pub fn new(config: &HttpConfig) -> Result<HttpTransport, TransportError> {
        let url = Url::parse(&config.url)
            // Not the text itself: it may hold a credential.
            .map_err(|e| TransportError::Config(format!("the url does not parse: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(TransportError::Config(format!(
                "url `{}`: the scheme must be http or https",
                shown_url(&url)
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let bad =
                |e: &dyn std::fmt::Display| TransportError::Config(format!("header `{name}`: {e}"));
            let name = HeaderName::try_from(name.as_str()).map_err(|e| bad(&e))?;
            let mut value = HeaderValue::try_from(value.as_str()).map_err(|e| bad(&e))?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .redirect(same_origin_redirects())
            .build()
            .map_err(|e| TransportError::Config(e.to_string()))?;
        let (incoming, receiver) = mpsc::channel(MAX_QUEUED_FRAMES);
        let shared = Arc::new(Shared {
            client,
            endpoint: Endpoint::new(&url, &config.headers),
            url,
            headers,
            session: Mutex::default(),
            reinitializing: tokio::sync::Mutex::new(()),
            incoming,
            tasks: Mutex::default(),
            requests: Mutex::default(),
            tool_headers: ToolHeaders::default(),
            modern: AtomicBool::new(false),
            auth: config.auth.clone(),
        });
        Ok(HttpTransport {
            sink: HttpSink { shared },
            source: HttpSource { incoming: receiver },
        })
    }

    /// A handle that tells the state of this transport's session, usable after the transport
    /// has been handed to a client.
    pub fn session(&self) -> HttpSession {
        HttpSession {
            shared: self.sink.shared.clone(),
        }
    }
}

/// What a [`HttpTransport`]'s session is now: for diagnostics and tests.
#[derive(Clone)]
pub struct HttpSession {
    shared: Arc<Shared>,
}

impl HttpSession {
    /// The session id the server gave, if it gave one.
    pub fn id(&self) -> Option<String> {
        let session = self.shared.session();
        session
            .id
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// The protocol version the transport sends in `MCP-Protocol-Version`.
    pub fn protocol_version(&self) -> Option<String> {
        let session = self.shared.session();
        session
            .version
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// How many times the transport started a new session because the server forgot one.
    pub fn reinitializations(&self) -> u64 {
        self.shared.session().generation
    }
}

impl std::fmt::Debug for HttpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSession")
            .field("id", &self.id())
            .finish()
    }
}

fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let origin = |u: &Url| {
            (
                u.scheme().to_owned(),
                u.host_str().map(str::to_owned),
                u.port_or_known_default(),
            )
        };
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| origin(first) == origin(attempt.url()));
        if !same {
            attempt.error("redirect to another origin refused")
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

impl Drop for HttpSink {
    fn drop(&mut self) {
        self.shared.tasks().abort_all();
    }
}

impl Transport for HttpTransport {
    type Sink = HttpSink;
    type Source = HttpSource;

    fn tool_headers(&self) -> Option<ToolHeaders> {
        Some(self.sink.shared.tool_headers.clone())
    }

    fn split(self) -> (HttpSink, HttpSource) {
        (self.sink, self.source)
    }

    fn halves(&mut self) -> (&mut HttpSink, &mut HttpSource) {
        (&mut self.sink, &mut self.source)
    }
}

impl FrameSource for HttpSource {
    async fn receive(&mut self) -> Option<Result<Frame, TransportError>> {
        self.receive_related()
            .await
            .map(|received| received.map(|r| r.frame))
    }

    async fn receive_related(&mut self) -> Option<Result<Received, TransportError>> {
        self.incoming.recv().await
    }
}

impl FrameSink for HttpSink {
    async fn send_all(&mut self, frames: &[Frame]) -> Result<(), TransportError> {
        for frame in frames {
            self.send(frame).await;
        }
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.shared.tasks().abort_all();
        let Some(id) = self.shared.session().id.take() else {
            return Ok(());
        };
        let answer = self
            .shared
            .send(
                self.shared
                    .request(Method::DELETE, Some(id), None)
                    .timeout(ACK_TIMEOUT),
            )
            .await;
        match answer {
            Ok(r) if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                Ok(())
            }
            Ok(r) => Err(self
                .shared
                .failure(None, "DELETE", Some(r.status()), excerpt(r).await)),
            Err(e) => Err(self.shared.failed(None, "DELETE", e)),
        }
    }
}

impl HttpSink {
    /// Posts one frame. Requests, and notifications and responses other than
    /// `notifications/initialized`, are exchanged in tasks of their own, so that no
    /// acknowledgement holds up the next frame; `notifications/initialized` is acknowledged
    /// before anything else is sent, since the server must see it before the requests that
    /// follow it.
    async fn send(&mut self, frame: &Frame) {
        let head = frame.head();
        let method = head
            .as_ref()
            .and_then(|h| h.method.as_deref().map(str::to_owned));
        let id = head.as_ref().and_then(|h| h.id_text().map(str::to_owned));
        match (method.as_deref(), id) {
            (Some(method), Some(id)) => {
                if method == "initialize" {
                    let mut session = self.shared.session();
                    session.initialize = Some(frame.clone());
                    session.initialize_id = Some(id.clone());
                    session.id = None;
                    session.version = None;
                }
                let shared = self.shared.clone();
                let frame = frame.clone();
                let key = id.clone();
                let exchange = self.shared.spawn(async move {
                    shared.exchange(frame, Some(id.clone())).await;
                    lock_requests(&shared.requests).remove(&id);
                });
                let mut requests = lock_requests(&self.shared.requests);
                requests.retain(|_, task| !task.is_finished());
                requests.insert(key, exchange);
            }
            (Some("notifications/initialized"), None) => {
                self.shared.exchange(frame.clone(), None).await;
                // What the server sends on the GET stream (a question during the first call,
                // say) is lost if the stream is not there yet: the next frame waits for it.
                let opened = self.shared.open_get_stream();
                let _ = tokio::time::timeout(ACK_TIMEOUT, opened).await;
            }
            // Notifications and responses: the server only acknowledges them.
            (Some("notifications/cancelled"), None) => {
                // The request's own exchange stops too: the caller is gone, nobody waits for
                // what the stream would still bring.
                let cancelled = frame
                    .value()
                    .ok()
                    .and_then(|v| v.pointer("/params/requestId").map(Value::to_string));
                if let Some(exchange) =
                    cancelled.and_then(|id| lock_requests(&self.shared.requests).remove(&id))
                {
                    exchange.abort();
                }
                if self.shared.modern.load(Ordering::Relaxed) {
                    return;
                }
                let shared = self.shared.clone();
                let frame = frame.clone();
                self.shared
                    .spawn(async move { shared.exchange(frame, None).await });
            }
            _ => {
                let shared = self.shared.clone();
                let frame = frame.clone();
                self.shared
                    .spawn(async move { shared.exchange(frame, None).await });
            }
        }
    }
}

fn lock_requests(
    requests: &Mutex<std::collections::HashMap<String, tokio::task::AbortHandle>>,
) -> MutexGuard<'_, std::collections::HashMap<String, tokio::task::AbortHandle>> {
    requests.lock().unwrap_or_else(|p| p.into_inner())
}

/// How an event stream ended.
#[derive(Default)]
struct StreamEnd {
    /// At least one message arrived.
    progressed: bool,
    /// It broke (a network failure), rather than being closed by the server.
    broke: bool,
}

/// What an exchange is waiting for, and what it has seen of its stream.
#[derive(Default)]
struct Reply {
    /// The id (JSON text) of the request whose answer this is.
    request_id: Option<String>,
    /// Keep the answer here instead of delivering it (the transport's own `initialize`).
    keep: bool,
    answer: Option<Frame>,
    answered: bool,
    last_event_id: Option<String>,
    retry: Option<Duration>,
    /// A failure after which resuming is pointless (an event over the size limit).
    fatal: Option<String>,
    /// The id (JSON text) the caller knows the request by, when it was sent again under
    /// another ([`Reply::request_id`]).
    original_id: Option<String>,
    /// A 2026-07-28 exchange: a stream is never resumed.
    modern: bool,
    /// A modern stream ended before the answer: the request is lost.
    lost: bool,
}

impl Shared {
    fn session(&self) -> MutexGuard<'_, ServerSession> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tasks(&self) -> MutexGuard<'_, JoinSet<()>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn spawn(
        &self,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> tokio::task::AbortHandle {
        let mut tasks = self.tasks();
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task)
    }

    fn failure(
        &self,
        request_id: Option<String>,
        method: &'static str,
        status: Option<StatusCode>,
        message: String,
    ) -> TransportError {
        let message = match status {
            Some(status) if message.is_empty() => format!("HTTP {status}"),
            Some(status) => format!("HTTP {status}: {message}"),
            None => message,
        };
        // The server's words may echo what it was sent, and an HTTP library's the whole URL.
        let message = self.endpoint.scrub(message);
        TransportError::Http {
            request_id,
            method,
            url: self.endpoint.shown().to_owned(),
            status: status.map(|s| s.as_u16()),
            message,
        }
    }

    /// The failure of a request that got no response.
    fn failed(
        &self,
        request_id: Option<String>,
        method: &'static str,
        error: SendError,
    ) -> TransportError {
        match error {
            SendError::Http(e) => self.failure(request_id, method, None, e.to_string()),
            // The provider's words may name the URL as configured (its query, its user).
            SendError::Auth(source) => TransportError::Auth {
                request_id,
                url: self.endpoint.shown().to_owned(),
                source: self.endpoint.scrub(source.to_string()).into(),
            },
        }
    }

    /// Sends `request`, authorized by the provider when there is one: a 401 or 403 is handed
    /// to it, and the request sent again when it says so, [`MAX_AUTH_RETRIES`] times at most.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, SendError> {
        let Some(auth) = &self.auth else {
            return send(request).await.map_err(SendError::Http);
        };
        // What a DPoP proof is made for: the request's method and URL.
        let (method, url) = match request.try_clone().and_then(|r| r.build().ok()) {
            Some(built) => (built.method().to_string(), built.url().to_string()),
            None => (Method::POST.to_string(), self.url.to_string()),
        };
        let sensitive = |text: &str| {
            let mut value = HeaderValue::try_from(text).map_err(|_| {
                SendError::Auth("the access token is not a valid header value".into())
            })?;
            value.set_sensitive(true);
            Ok::<_, SendError>(value)
        };
        let mut retries = 0;
        loop {
            let target = AuthTarget {
                method: &method,
                url: &url,
            };
            let header = auth.header(target).await.map_err(SendError::Auth)?;
            if let Some(header) = &header {
                self.endpoint.sent(&header.value);
            }
            let (value, proof) = match &header {
                Some(header) => (
                    Some(sensitive(&header.value)?),
                    header.dpop.as_deref().map(sensitive).transpose()?,
                ),
                None => (None, None),
            };
            let authorized = |r: reqwest::RequestBuilder| {
                let r = match value.clone() {
                    Some(value) => r.header(reqwest::header::AUTHORIZATION, value),
                    None => r,
                };
                match proof.clone() {
                    Some(proof) => r.header(DPOP_HEADER, proof),
                    None => r,
                }
            };
            // Bodies are text, so a request can always be copied; one that could not is sent
            // once.
            let Some(attempt) = request.try_clone() else {
                return send(authorized(request)).await.map_err(SendError::Http);
            };
            let response = send(authorized(attempt)).await.map_err(SendError::Http)?;
            let status = response.status();
            let refused = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
            if !refused || retries >= MAX_AUTH_RETRIES {
                return Ok(response);
            }
            let challenge = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok());
            let refusal = Refusal {
                status: status.as_u16(),
                challenge,
                stamp: header.as_ref().map(|h| h.stamp),
                dpop_nonce: response
                    .headers()
                    .get(DPOP_NONCE_HEADER)
                    .and_then(|v| v.to_str().ok()),
            };
            if !auth.refused(refusal).await.map_err(SendError::Auth)? {
                return Ok(response);
            }
            retries += 1;
        }
    }

    async fn report(&self, error: TransportError) {
        tracing::debug!(%error, "streamable HTTP");
        let _ = self.incoming.send(Err(error)).await;
    }

    /// A request to the endpoint with the configured headers and the session's.
    fn request(
        &self,
        method: Method,
        session: Option<HeaderValue>,
        version: Option<HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .request(method, self.url.clone())
            .headers(self.headers.clone());
        if let Some(session) = session {
            request = request.header(SESSION_HEADER, session);
        }
        if let Some(version) = version {
            request = request.header(VERSION_HEADER, version);
        }
        request
    }

    fn post(
        &self,
        frame: &Frame,
        session: Option<HeaderValue>,
        version: Option<HeaderValue>,
    ) -> reqwest::RequestBuilder {
        self.request(Method::POST, session, version)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(frame.text().to_owned())
    }

    /// POSTs one frame and delivers what comes back; failures are reported, never returned.
    async fn exchange(self: &Arc<Self>, frame: Frame, request_id: Option<String>) {
        if let Some(headers) = modern_headers(&frame, &self.tool_headers) {
            self.modern.store(true, Ordering::Relaxed);
            return self.exchange_modern(frame, request_id, headers).await;
        }
        let is_initialize = request_id.is_some()
            && self.session().initialize_id.as_deref() == request_id.as_deref();
        let mut retried = false;
        loop {
            let (session, version, generation) = {
                let s = self.session();
                (s.id.clone(), s.version.clone(), s.generation)
            };
            let had_session = session.is_some();
            let mut post = self.post(&frame, session, version);
            if request_id.is_none() {
                post = post.timeout(ACK_TIMEOUT);
            }
            let response = match self.send(post).await {
                Ok(response) => response,
                Err(e) => return self.report(self.failed(request_id, "POST", e)).await,
            };
            let status = response.status();
            if status == StatusCode::NOT_FOUND && had_session && !is_initialize && !retried {
                // Some servers send a JSON-RPC error with a 404; an answer to this request is
                // an answer, not a lost session.
                let body = excerpt_bounded(response).await;
                if let Some(answer) = Frame::parse(&body)
                    .ok()
                    .filter(|f| is_answer_to(f, request_id.as_deref()))
                {
                    let _ = self.incoming.send(Ok(Received::unrelated(answer))).await;
                    return;
                }
                retried = true;
                match self.reinitialize(generation).await {
                    Ok(()) => continue,
                    Err(e) => return self.report(e).await,
                }
            }
            if !status.is_success() {
                return self.refused(response, request_id).await;
            }
            if is_initialize {
                if let Err(e) = self.take_session_id(&response, request_id.clone()) {
                    return self.report(e).await;
                }
            }
            let mut reply = Reply {
                request_id,
                ..Reply::default()
            };
            if let Err(e) = self.read_reply(response, &mut reply).await {
                self.report(e).await;
            }
            return;
        }
    }

    /// Delivers the answer in an error response's body when it answers `request_id` (a
    /// modern server answers an unsupported version or a header mismatch with 400 and a
    /// JSON-RPC error; some servers send errors with a 404); else reports the failure.
    async fn refused(&self, response: reqwest::Response, request_id: Option<String>) {
        self.refused_as(response, request_id.clone(), request_id)
            .await;
    }

    /// POSTs a 2026-07-28 request: no session, the request's headers beside its body, no
    /// resumption. A stream that ends before the answer lost the request: it is sent again
    /// under a new id ([`MAX_REISSUES`] times at most), and the answer delivered under the
    /// first.
    async fn exchange_modern(
        self: &Arc<Self>,
        frame: Frame,
        request_id: Option<String>,
        headers: Vec<(String, String)>,
    ) {
        let mut sent = frame;
        let mut wire_id = request_id.clone();
        for attempt in 0..=MAX_REISSUES {
            let mut post = self
                .request(Method::POST, None, None)
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .body(sent.text().to_owned());
            for (name, value) in &headers {
                post = post.header(name.as_str(), value.as_str());
            }
            if request_id.is_none() {
                post = post.timeout(ACK_TIMEOUT);
            }
            let response = match self.send(post).await {
                Ok(response) => response,
                Err(e) => return self.report(self.failed(request_id, "POST", e)).await,
            };
            if !response.status().is_success() {
                return self.refused_as(response, wire_id, request_id).await;
            }
            let mut reply = Reply {
                request_id: wire_id.clone(),
                original_id: (wire_id != request_id)
                    .then(|| request_id.clone())
                    .flatten(),
                modern: true,
                ..Reply::default()
            };
            if let Err(e) = self.read_reply(response, &mut reply).await {
                return self.report(e).await;
            }
            if !reply.lost {
                return;
            }
            let (Some(original), true) = (&request_id, attempt < MAX_REISSUES) else {
                break;
            };
            let new_id = json!(format!("mcpx-reissue-{}-{original}", attempt + 1)).to_string();
            match with_id(&sent, &new_id) {
                Some(frame) => sent = frame,
                None => break,
            }
            tracing::debug!(request = %original, "the response stream broke: sent again as {new_id}");
            wire_id = Some(new_id);
        }
        self.report(self.failure(
            request_id,
            "POST",
            None,
            format!("the response stream ended before the answer, {MAX_REISSUES} times"),
        ))
        .await;
    }

    /// [`Shared::refused`] for a request sent under `wire_id` in place of `original` (the
    /// same id unless it was sent again): an answer is delivered under `original`.
    async fn refused_as(
        &self,
        response: reqwest::Response,
        wire_id: Option<String>,
        original: Option<String>,
    ) {
        let status = response.status();
        let body = excerpt_bounded(response).await;
        let answer = Frame::parse(&body)
            .ok()
            .filter(|f| is_answer_to(f, wire_id.as_deref()));
        let answer = match answer {
            Some(answer) if wire_id != original => {
                with_id(&answer, original.as_deref().unwrap_or("null"))
            }
            answer => answer,
        };
        if let Some(answer) = answer {
            let _ = self.incoming.send(Ok(Received::unrelated(answer))).await;
            return;
        }
        let mut message = body;
        if message.len() > ERROR_EXCERPT_BYTES {
            let mut cut = ERROR_EXCERPT_BYTES;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        self.report(self.failure(original, "POST", Some(status), message.trim().to_owned()))
            .await;
    }

    fn take_session_id(
        &self,
        response: &reqwest::Response,
        request_id: Option<String>,
    ) -> Result<(), TransportError> {
        let id = response.headers().get(SESSION_HEADER).cloned();
        if let Some(id) = &id {
            let visible = id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
            if !visible || id.is_empty() {
                return Err(self.failure(
                    request_id,
                    "POST",
                    None,
                    "the server's Mcp-Session-Id is not visible ASCII".to_owned(),
                ));
            }
        }
        self.session().id = id;
        Ok(())
    }

    /// Reads the answer to a POST: nothing (202), one JSON body, or an event stream, resumed
    /// when it ends before the answer it carries.
    async fn read_reply(
        self: &Arc<Self>,
        response: reqwest::Response,
        reply: &mut Reply,
    ) -> Result<(), TransportError> {
        let kind = content_type(&response);
        if response.status() == StatusCode::ACCEPTED || response.status() == StatusCode::NO_CONTENT
        {
            return match &reply.request_id {
                Some(id) => Err(self.failure(
                    Some(id.clone()),
                    "POST",
                    None,
                    "the server accepted the request but sent no answer".to_owned(),
                )),
                None => Ok(()),
            };
        }
        match kind.as_str() {
            "text/event-stream" => self.read_stream(response, reply).await,
            "application/json" => {
                let body = read_bounded(response)
                    .await
                    .map_err(|e| self.failure(reply.request_id.clone(), "POST", None, e))?;
                match Frame::parse(&body) {
                    Ok(frame) => {
                        self.take(frame, reply).await;
                        Ok(())
                    }
                    Err(e) if reply.request_id.is_some() => {
                        Err(self.failure(reply.request_id.clone(), "POST", None, e.to_string()))
                    }
                    Err(e) => Err(e.into()),
                }
            }
            // An acknowledgement with an empty body of any type.
            _ if reply.request_id.is_none() => Ok(()),
            other => Err(self.failure(
                reply.request_id.clone(),
                "POST",
                None,
                format!("unexpected content type `{other}`"),
            )),
        }
    }

    async fn read_stream(
        self: &Arc<Self>,
        mut response: reqwest::Response,
        reply: &mut Reply,
    ) -> Result<(), TransportError> {
        let mut idle = 0;
        loop {
            let end = self.pump(response, reply).await;
            if end.progressed {
                idle = 0;
            } else {
                idle += 1;
            }
            if reply.request_id.is_none() || reply.answered {
                return Ok(());
            }
            let request_id = reply.original_id.clone().or(reply.request_id.clone());
            if let Some(fatal) = reply.fatal.take() {
                return Err(self.failure(request_id, "POST", None, fatal));
            }
            if reply.modern {
                reply.lost = true;
                return Ok(());
            }
            let Some(last) = reply.last_event_id.clone() else {
                return Err(self.failure(
                    request_id,
                    "POST",
                    None,
                    "the event stream ended before the answer, with no event id to resume from"
                        .to_owned(),
                ));
            };
            if idle > MAX_RESUMPTIONS {
                return Err(self.failure(request_id, "GET", None, format!("the event stream ended before the answer; gave up after {MAX_RESUMPTIONS} resumptions")));
            }
            // `retry` paces streams the server closes on purpose; after a network failure the
            // first try is at once, before a server's short-lived replay buffer forgets.
            if !(end.broke && idle <= 1) {
                tokio::time::sleep(reply.retry.unwrap_or(DEFAULT_RETRY)).await;
            }
            response = self
                .resume(Some(&last))
                .await
                .map_err(|(status, message)| self.failure(request_id, "GET", status, message))?;
        }
    }

    /// A GET for the server's stream, resumed after `last_event_id` when given.
    async fn resume(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, (Option<StatusCode>, String)> {
        let (session, version) = {
            let s = self.session();
            (s.id.clone(), s.version.clone())
        };
        let mut get = self
            .request(Method::GET, session, version)
            .header(ACCEPT, "text/event-stream");
        if let Some(last) = last_event_id {
            get = get.header(LAST_EVENT_HEADER, last);
        }
        let response = self.send(get).await.map_err(|e| (None, e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err((Some(status), excerpt(response).await));
        }
        match content_type(&response).as_str() {
            "text/event-stream" => Ok(response),
            other => Err((
                None,
                format!("unexpected content type `{other}` for an event stream"),
            )),
        }
    }

    /// Reads events until the stream ends. An event that repeats the id the stream was resumed
    /// after is one already taken, and is skipped.
    async fn pump(&self, response: reqwest::Response, reply: &mut Reply) -> StreamEnd {
        let resumed_after = reply.last_event_id.clone();
        let mut events = std::pin::pin!(sse_events(response.bytes_stream()));
        let mut end = StreamEnd::default();
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(SseError::TooLarge { limit }) => {
                    reply.fatal = Some(format!("an event of the stream is over {limit} bytes"));
                    self.report(
                        FrameError::TooLarge {
                            limit: MAX_FRAME_BYTES,
                        }
                        .into(),
                    )
                    .await;
                    break;
                }
                // A broken stream is resumed by the caller, where it can be.
                Err(SseError::Broken(e)) => {
                    tracing::debug!(error = %e, "event stream broke");
                    end.broke = true;
                    break;
                }
            };
            if event.id.is_some() && event.id == resumed_after {
                continue;
            }
            if let Some(id) = event.id {
                reply.last_event_id = Some(id);
            }
            if let Some(ms) = event.retry {
                reply.retry = Some(Duration::from_millis(ms).min(MAX_RETRY));
            }
            if event.event.as_deref().is_some_and(|e| e != "message") {
                continue;
            }
            // A priming event carries an id and no message.
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            end.progressed = true;
            match Frame::parse(&data) {
                Ok(frame) => self.take(frame, reply).await,
                Err(e) => self.report(e.into()).await,
            }
        }
        end
    }

    /// Delivers a frame from the server, or keeps it when it is the answer the exchange keeps.
    async fn take(&self, mut frame: Frame, reply: &mut Reply) {
        if is_answer_to(&frame, reply.request_id.as_deref()) {
            reply.answered = true;
            if let Some(original) = &reply.original_id {
                match with_id(&frame, original) {
                    Some(answer) => frame = answer,
                    None => return,
                }
            }
            self.note_version(&frame);
            if reply.keep {
                reply.answer = Some(frame);
                return;
            }
        }
        // What arrives on a request's stream belongs to that request: the server's questions
        // during a call are the call's.
        let related = reply.original_id.clone().or(reply.request_id.clone());
        let _ = self.incoming.send(Ok(Received { frame, related })).await;
    }

    /// Takes the protocol version from the answer to `initialize`, for the version header.
    fn note_version(&self, frame: &Frame) {
        let mut session = self.session();
        let answers_initialize = frame.head().is_some_and(|h| {
            h.id_text().is_some() && h.id_text() == session.initialize_id.as_deref()
        });
        if !answers_initialize {
            return;
        }
        let version = frame.value().ok().and_then(|v| {
            v.pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .and_then(|v| HeaderValue::from_str(v).ok())
        });
        session.version = version;
    }

    /// Starts a new session after the server forgot the one with `generation`, replaying the
    /// client's `initialize`.
    async fn reinitialize(self: &Arc<Self>, generation: u64) -> Result<(), TransportError> {
        let _one = self.reinitializing.lock().await;
        let initialize = {
            let mut s = self.session();
            if s.generation != generation {
                return Ok(());
            }
            s.id = None;
            s.version = None;
            s.initialize.clone()
        };
        let failed = |message: String| {
            self.failure(
                None,
                "POST",
                None,
                format!("re-initializing after the server forgot the session: {message}"),
            )
        };
        let initialize = initialize.ok_or_else(|| failed("no initialize to replay".to_owned()))?;
        tracing::info!(url = %self.endpoint.shown(), "the server forgot the session; initializing again");
        let mut replay = initialize.value().map_err(|e| failed(e.to_string()))?;
        let id = format!("mcpx-reinitialize-{}", generation + 1);
        replay["id"] = json!(id);
        let replay = Frame::from_value(&replay);
        let id_text = json!(id).to_string();
        self.session().initialize_id = Some(id_text.clone());
        let response = self
            .send(self.post(&replay, None, None))
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            let status = response.status();
            return Err(failed(format!(
                "HTTP {status}: {}",
                excerpt(response).await
            )));
        }
        self.take_session_id(&response, None)?;
        let mut reply = Reply {
            request_id: Some(id_text),
            keep: true,
            ..Reply::default()
        };
        self.read_reply(response, &mut reply).await?;
        let answer = reply
            .answer
            .ok_or_else(|| failed("no answer to initialize".to_owned()))?;
        if answer
            .value()
            .ok()
            .and_then(|v| v.get("result").cloned())
            .is_none()
        {
            return Err(failed(format!("initialize failed: {answer}")));
        }
        let initialized =
            Frame::from_value(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let (session, version) = {
            let s = self.session();
            (s.id.clone(), s.version.clone())
        };
        let ack = self
            .send(
                self.post(&initialized, session, version)
                    .timeout(ACK_TIMEOUT),
            )
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !ack.status().is_success() {
            return Err(failed(format!(
                "notifications/initialized: HTTP {}",
                ack.status()
            )));
        }
        {
            let mut s = self.session();
            s.generation += 1;
            s.get_stream_open = false;
        }
        self.open_get_stream();
        Ok(())
    }

    /// Opens the GET stream of the current session, once.
    /// Opens the GET stream unless it is open; the receiver completes once the server has
    /// answered the first GET (with a stream, a refusal, or a failure).
    fn open_get_stream(self: &Arc<Self>) -> tokio::sync::oneshot::Receiver<()> {
        let (opened, answered) = tokio::sync::oneshot::channel();
        let generation = {
            let mut s = self.session();
            if s.get_stream_open {
                return answered;
            }
            s.get_stream_open = true;
            s.generation
        };
        let shared = self.clone();
        self.spawn(async move { shared.listen(generation, opened).await });
        answered
    }

    /// Reads the GET stream while the session lasts, reopening it after the server's `retry`
    /// delay when it ends. `opened` is told when the first GET is answered.
    async fn listen(self: Arc<Self>, generation: u64, opened: tokio::sync::oneshot::Sender<()>) {
        let mut reply = Reply::default();
        let mut idle = 0;
        let mut opened = Some(opened);
        loop {
            if self.session().generation != generation {
                return;
            }
            let answered = self.resume(reply.last_event_id.clone().as_deref()).await;
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            match answered {
                Ok(response) => {
                    if self.pump(response, &mut reply).await.progressed {
                        idle = 0;
                    } else {
                        idle += 1;
                    }
                }
                // No stream offered, or the session is gone (the next POST starts a new one).
                Err((Some(StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_FOUND), _)) => return,
                Err((status, message)) => {
                    idle += 1;
                    if idle > MAX_RESUMPTIONS {
                        return self
                            .report(self.failure(None, "GET", status, message))
                            .await;
                    }
                }
            }
            if idle > MAX_RESUMPTIONS || reply.fatal.is_some() {
                return;
            }
            tokio::time::sleep(reply.retry.unwrap_or(DEFAULT_RETRY)).await;
        }
    }
}

/// `frame` with its `id` set to `id` (JSON text), every other member as it was written.
fn with_id(frame: &Frame, id: &str) -> Option<Frame> {
    let mut members = crate::RawParams::parse(
        serde_json::value::RawValue::from_string(frame.text().to_owned())
            .ok()?
            .as_ref(),
    )
    .ok()?;
    members.set_raw(
        "id",
        serde_json::value::RawValue::from_string(id.to_owned()).ok()?,
    );
    Frame::parse(members.to_raw().get()).ok()
}

/// Sends `request`, once. First the runtime polls its I/O driver (a yielded task is woken after
/// it): a close that the server sent on an idle keep-alive connection while this runtime was
/// busy is read now, so the pool does not hand that connection out, or hyper gives the request
/// back unwritten and hyper-util sends it on another connection. Without this, the request is
/// written to the closed connection and fails, and a request that may have been received is
/// never sent again.
async fn send(request: reqwest::RequestBuilder) -> reqwest::Result<reqwest::Response> {
    tokio::task::yield_now().await;
    request.send().await
}

/// Whether `frame` is the response to the request with id `request_id` (JSON text).
fn is_answer_to(frame: &Frame, request_id: Option<&str>) -> bool {
    frame
        .head()
        .is_some_and(|h| h.method.is_none() && h.id_text().is_some() && h.id_text() == request_id)
}

/// A body read to [`MAX_FRAME_BYTES`] at most, empty when it is longer or not text.
async fn excerpt_bounded(response: reqwest::Response) -> String {
    read_bounded(response).await.unwrap_or_default()
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The body of a response, refused past [`MAX_FRAME_BYTES`].
async fn read_bounded(mut response: reqwest::Response) -> Result<String, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_FRAME_BYTES {
            return Err(FrameError::TooLarge {
                limit: MAX_FRAME_BYTES,
            }
            .to_string());
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body).map_err(|_| "the body is not UTF-8".to_owned())
}

/// The start of an error answer's body, for the error message.
async fn excerpt(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_EXCERPT_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(ERROR_EXCERPT_BYTES);
    String::from_utf8_lossy(&body).trim().to_owned()
}
