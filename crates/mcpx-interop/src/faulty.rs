//! A faulty network in front of a real HTTP MCP server: a loopback HTTP proxy that passes
//! requests through and, when a test says so, answers 500, holds back response headers, cuts
//! an SSE response after its first event, or answers 404 for the sessions it has seen (the
//! server "forgot" them).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

/// The largest request body the proxy forwards.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How long a cut stream waits, after its first event, before breaking.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(200);

const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");

/// What the proxy does to the requests it is given from now on.
#[derive(Debug, Default)]
struct Faults {
    /// The next this many POSTs are answered with this status, not forwarded.
    fail: Option<(usize, StatusCode)>,
    /// The next POST's response headers are held back this long.
    delay: Option<Duration>,
    /// The next SSE response is cut after its first event.
    cut: bool,
    /// Requests in these sessions are answered 404.
    forgotten: HashSet<String>,
    /// Every session id seen so far.
    seen: HashSet<String>,
    /// `initialize` requests forwarded.
    initializations: usize,
}

/// The proxy; it stops when dropped.
pub struct FaultyProxy {
    /// The MCP endpoint to use instead of the server's.
    pub url: String,
    faults: Arc<Mutex<Faults>>,
    serving: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Shared {
    upstream: String,
    client: reqwest::Client,
    faults: Arc<Mutex<Faults>>,
}

impl FaultyProxy {
    /// A proxy to the MCP endpoint `upstream` (a loopback URL), listening on 127.0.0.1.
    pub async fn to(upstream: &str) -> FaultyProxy {
        assert!(
            upstream.starts_with("http://127.0.0.1:"),
            "loopback only: {upstream}"
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let faults = Arc::new(Mutex::new(Faults::default()));
        let shared = Shared {
            upstream: upstream.to_owned(),
            client: reqwest::Client::builder().no_proxy().build().unwrap(),
            faults: faults.clone(),
        };
        let app = axum::Router::new().fallback(forward).with_state(shared);
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FaultyProxy {
            url: format!("http://{address}/mcp"),
            faults,
            serving,
        }
    }

    fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next `count` POSTs are answered with `status` and a short body.
    pub fn fail_next(&self, count: usize, status: u16) {
        self.faults().fail = Some((count, StatusCode::from_u16(status).unwrap()));
    }

    /// The next POST's response headers are held back for `delay`.
    pub fn delay_next(&self, delay: Duration) {
        self.faults().delay = Some(delay);
    }

    /// The next SSE response ends, abruptly, after its first event.
    pub fn cut_next_stream(&self) {
        self.faults().cut = true;
    }

    /// Every session seen so far is answered 404 from now on; returns how many.
    pub fn forget_sessions(&self) -> usize {
        let mut faults = self.faults();
        let seen: Vec<String> = faults.seen.iter().cloned().collect();
        faults.forgotten.extend(seen);
        faults.forgotten.len()
    }

    /// How many `initialize` requests went through.
    pub fn initializations(&self) -> usize {
        self.faults().initializations
    }
}

impl Drop for FaultyProxy {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

async fn forward(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let session = parts
        .headers
        .get(&SESSION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let is_post = parts.method == axum::http::Method::POST;
    let (fail, delay, cut) = {
        let mut faults = shared.faults.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(session) = &session {
            if faults.forgotten.contains(session) {
                return (StatusCode::NOT_FOUND, "session not found").into_response();
            }
            faults.seen.insert(session.clone());
        }
        if is_post && body.windows(12).any(|w| w == b"\"initialize\"") {
            faults.initializations += 1;
        }
        let fail = match faults.fail {
            Some((count, status)) if is_post && count > 0 => {
                faults.fail = (count > 1).then_some((count - 1, status));
                Some(status)
            }
            _ => None,
        };
        let delay = if is_post { faults.delay.take() } else { None };
        (fail, delay, faults.cut)
    };
    if let Some(status) = fail {
        return (status, "injected failure").into_response();
    }
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let mut outbound = shared
        .client
        .request(parts.method.clone(), &shared.upstream)
        .body(body);
    for (name, value) in &parts.headers {
        if name != axum::http::header::HOST && name != axum::http::header::CONTENT_LENGTH {
            outbound = outbound.header(name, value);
        }
    }
    let answer = match outbound.send().await {
        Ok(answer) => answer,
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let is_stream = answer
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != axum::http::header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    let body = if is_stream && cut {
        shared.faults.lock().unwrap_or_else(|e| e.into_inner()).cut = false;
        Body::from_stream(first_event_then_break(answer))
    } else {
        Body::from_stream(answer.bytes_stream())
    };
    response.body(body).unwrap()
}

/// Where the first SSE event of `bytes` ends (after its blank line, `\n\n` or `\r\n\r\n`).
fn first_event_end(bytes: &[u8]) -> Option<usize> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = bytes.windows(3).position(|w| w == b"\n\r\n").map(|i| i + 3);
    lf.into_iter().chain(crlf).min()
}

enum Cut {
    Forwarding(Vec<u8>),
    Breaking,
    Done,
}

/// The response's bytes up to the end of its first event, then an error that breaks the
/// connection (the upstream's answer is never finished).
fn first_event_then_break(
    answer: reqwest::Response,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    let chunks = Box::pin(answer.bytes_stream());
    futures_util::stream::unfold(
        (chunks, Cut::Forwarding(Vec::new())),
        |(mut chunks, state)| async move {
            match state {
                Cut::Done => None,
                Cut::Breaking => {
                    // Time for the event to be written out before the connection breaks.
                    tokio::time::sleep(FLUSH_BEFORE_CUT).await;
                    Some((
                        Err(std::io::Error::other("cut by the faulty proxy")),
                        (chunks, Cut::Done),
                    ))
                }
                Cut::Forwarding(mut sent) => match chunks.next().await {
                    Some(Ok(chunk)) => {
                        let start = sent.len();
                        sent.extend_from_slice(&chunk);
                        match first_event_end(&sent) {
                            Some(end) => Some((
                                Ok(Bytes::copy_from_slice(&sent[start.min(end)..end])),
                                (chunks, Cut::Breaking),
                            )),
                            None => Some((Ok(chunk), (chunks, Cut::Forwarding(sent)))),
                        }
                    }
                    Some(Err(e)) => Some((Err(std::io::Error::other(e)), (chunks, Cut::Done))),
                    None => None,
                },
            }
        },
    )
}
