//! Which protocol era a server speaks, found from what the server answers and never from a
//! clock alone.
//!
//! The 2026-07-28 specification (basic/transports/stdio, "Backward Compatibility") has a
//! client that speaks both eras send `server/discover` first: a discover result (or a modern
//! error such as -32022) means modern, any other error means legacy, and so does no answer
//! "within a reasonable timeout". That last clause is where a start under load goes wrong: a
//! server that is still loading (an interpreter, `npx` resolving a package, a CPU-starved
//! machine) is silent because it has not read anything yet, not because it ignores the
//! probe; taking it for legacy after a fixed wait made the era depend on the load, and a
//! dual-era server started late was spoken to in the old era.
//!
//! So the probe here is answered, not timed:
//!
//! 1. `server/discover` is sent. A discover result is modern; any other error is legacy
//!    (then `initialize`); a modern error naming 2026-07-28 is asked again
//!    ([`crate::MAX_PROBES`]).
//! 2. Without an answer after [`DISCOVER_QUIET`], `initialize` is sent too, pipelined behind
//!    the probe. A server reading its input in order meets the probe first, so its answer to
//!    the probe still comes first and still decides, however late (up to the start timeout
//!    the caller gives the whole). A server that drops requests before `initialize` answers
//!    only `initialize`: that answer, with the probe still unanswered [`DISCOVER_GRACE`]
//!    later, is the evidence for legacy. The quiet period only bounds how long such a server
//!    waits; it never decides.
//! 3. A server that closes, crashes or errs anywhere after the probe (the MCP Python SDK 1.6
//!    dies on a request it cannot validate, so a server built on it exits on the probe) is
//!    started again without it, as legacy ([`crate::connect`], [`Why::FellBack`]).
//! 4. What was learnt is the caller's to keep ([`Protocol::Remembered`]): the next start of
//!    the same server speaks that era directly, and follows the server's answer instead when
//!    it contradicts the memory (the specification allows persisting the era "across restarts
//!    of the same server configuration, re-probing if the cached assumption later fails").
//!
//! The costs, argued: a modern server that is slower than the quiet period gets an
//! `initialize` it will refuse (or, dual-era, answer) after its discover answer; that answer
//! is expected and dropped unseen, never cancelled (the legacy specifications forbid
//! cancelling `initialize`). A legacy server that ignores the probe pays the quiet period and
//! the grace once, then never again. A dual-era server that answers `initialize` and leaves
//! the probe past the grace is spoken to as legacy, which it also speaks.

use serde_json::{json, Value};

use crate::client::{ClientError, ClientOptions, ACCEPTED_VERSIONS, OFFERED_VERSION};
use crate::codes::{self, ErrorObject};
use crate::modern::{
    self, probed, Era, Identity, Probed, Protocol, Why, DISCOVER_GRACE, DISCOVER_QUIET, MAX_PROBES,
    MODERN_VERSION,
};
use crate::rpc::Sent;
use crate::{Connection, Response, RpcError, TransportError};

/// Which era a connection speaks, why, and what decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The era.
    pub era: Era,
    /// Why that era.
    pub why: Why,
    /// What decided it, for the log (`server/discover answered: Method not found`, …).
    pub evidence: String,
}

/// How the handshake went.
pub(crate) struct Handshake {
    pub(crate) modern: Option<Identity>,
    pub(crate) version: String,
    pub(crate) answer: Value,
    pub(crate) discovery: Discovery,
}

/// `initialize`, or for a modern server nothing more than `server/discover`, as
/// `options.protocol` says (see the module doc).
pub(crate) async fn handshake(
    connection: &Connection,
    options: &ClientOptions,
) -> Result<Handshake, ClientError> {
    let identity = Identity {
        capabilities: options.handlers.capabilities(),
        client_info: options.client_info.clone(),
    };
    let talk = Talk {
        connection,
        options,
        identity,
    };
    match options.protocol {
        Protocol::Auto => talk.probe().await,
        Protocol::Legacy => {
            let answer = talk.initialize().await;
            talk.legacy(answer?, Why::Configured, "the config says legacy")
                .await
        }
        Protocol::Remembered(Era::Legacy) => match talk.initialize().await {
            Err(refusal) if names_modern(&refusal) => {
                let evidence = "remembered legacy, but it refused initialize naming 2026-07-28";
                talk.discover_only(MAX_PROBES, Why::Probed, evidence).await
            }
            // Any other refusal of `initialize` (a 2026-07-28 HTTP server that wants the
            // MCP-Protocol-Version header answers -32020, say): the memory no longer holds, and
            // the server, still there, is asked what it speaks (the specification: "re-probing
            // if the cached assumption later fails").
            Err(RpcError::Remote(refusal)) => {
                let evidence = format!(
                    "remembered legacy, but it refused initialize ({}: {})",
                    refusal.code, refusal.message
                );
                talk.discover_only(MAX_PROBES, Why::Probed, &evidence).await
            }
            answer => {
                talk.legacy(answer?, Why::Remembered, "an earlier start learnt it")
                    .await
            }
        },
        Protocol::Modern => {
            talk.discover_only(MAX_PROBES, Why::Configured, "the config says 2026-07-28")
                .await
        }
        Protocol::Remembered(Era::Modern) => {
            match talk.discover(MAX_PROBES).await? {
                Probed::Modern(result) => {
                    Ok(talk.modern(result, Why::Remembered, "an earlier start learnt it"))
                }
                other => {
                    // The memory no longer holds: the server's answer decides.
                    let evidence = format!("remembered modern, but {}", other.describe());
                    let answer = talk.initialize().await;
                    talk.legacy(answer?, Why::Probed, &evidence).await
                }
            }
        }
    }
}

/// What a handshake needs at every step.
struct Talk<'a> {
    connection: &'a Connection,
    options: &'a ClientOptions,
    identity: Identity,
}

/// What the pipelined probe heard first.
enum First {
    Discover(Result<Response, RpcError>),
    Initialize(Result<Response, RpcError>),
    Nothing,
}

impl Talk<'_> {
    /// Sends `server/discover`, then `initialize` behind it after [`DISCOVER_QUIET`], and
    /// decides from the answers (module doc, steps 1 and 2).
    async fn probe(&self) -> Result<Handshake, ClientError> {
        let mut discover = self
            .connection
            .send_request("server/discover", Some(self.discover_params()?))
            .await
            .map_err(after_probe)?;
        let quiet = DISCOVER_QUIET.min(self.options.timeout);
        if let Ok(answer) = tokio::time::timeout(quiet, discover.answer()).await {
            return self.discovered(answer, None).await;
        }
        let mut initialize = self
            .connection
            .send_request("initialize", Some(raw(&self.initialize_params())))
            .await
            .map_err(after_probe)?;
        // Each request waits at most the request timeout: `initialize` from when it was sent.
        let deadline = tokio::time::Instant::now() + self.options.timeout;
        // Both answered: the probe's decides (a server reading in order answered it first).
        let first = tokio::select! {
            biased;
            answer = discover.answer() => First::Discover(answer),
            answer = initialize.answer() => First::Initialize(answer),
            () = tokio::time::sleep_until(deadline) => First::Nothing,
        };
        match first {
            First::Discover(answer) => self.discovered(answer, Some(initialize)).await,
            First::Initialize(answer) => self.initialized(answer, discover).await,
            First::Nothing => Err(ClientError::Rpc(RpcError::Timeout {
                method: "server/discover".to_owned(),
                after: self.options.timeout,
            })),
        }
    }

    /// The probe was answered; `initialize`, if it was sent behind it, waits.
    async fn discovered(
        &self,
        answer: Result<Response, RpcError>,
        initialize: Option<Sent>,
    ) -> Result<Handshake, ClientError> {
        if matches!(answer, Err(RpcError::Closed | RpcError::NotSent)) {
            return Err(ClientError::ClosedByProbe);
        }
        let answer = match answer {
            Err(refusal) if refuses_authorization(&refusal) => {
                // Nothing about the era: `initialize` is still tried, but when it fails too the
                // refusal is what the user needs to read (a scope never granted, a login
                // refused), not what a 2026-07-28 server says of an `initialize`.
                let evidence = format!("server/discover: {refusal}");
                return match self.initialize_behind(initialize).await {
                    Ok(response) => self.legacy(response, Why::Probed, &evidence).await,
                    Err(_) => Err(refusal.into()),
                };
            }
            answer => answer,
        };
        match probed(answer) {
            Probed::Modern(result) => {
                if let Some(initialize) = initialize {
                    initialize.ignore();
                }
                Ok(self.modern(result, Why::Probed, "server/discover answered"))
            }
            Probed::Again => {
                if let Some(initialize) = initialize {
                    initialize.ignore();
                }
                let evidence = "server/discover answered, on a second asking";
                self.discover_only(MAX_PROBES - 1, Why::Probed, evidence)
                    .await
            }
            other => {
                let evidence = other.describe();
                let answer = self.initialize_behind(initialize).await;
                self.legacy(answer?, Why::Probed, &evidence).await
            }
        }
    }

    /// `initialize` was answered while the probe sent before it was not.
    async fn initialized(
        &self,
        answer: Result<Response, RpcError>,
        mut discover: Sent,
    ) -> Result<Handshake, ClientError> {
        match answer {
            Ok(response) => match tokio::time::timeout(DISCOVER_GRACE, discover.answer()).await {
                Ok(Err(RpcError::Closed | RpcError::NotSent)) => Err(ClientError::ClosedByProbe),
                Ok(late) => match probed(late) {
                    Probed::Modern(result) => Ok(self.modern(
                        result,
                        Why::Probed,
                        "server/discover answered (after initialize)",
                    )),
                    other => {
                        let evidence = other.describe();
                        self.legacy(response, Why::Probed, &evidence).await
                    }
                },
                Err(_) => {
                    discover.ignore();
                    let evidence = "initialize answered while server/discover stayed unanswered";
                    self.legacy(response, Why::Probed, evidence).await
                }
            },
            Err(refusal) if names_modern(&refusal) => {
                // A modern server that dropped the probe (it would have answered it first):
                // asked again.
                discover.ignore();
                let evidence = "server/discover answered, asked again after it refused initialize naming 2026-07-28";
                self.discover_only(MAX_PROBES, Why::Probed, evidence).await
            }
            Err(RpcError::Closed | RpcError::NotSent) => Err(ClientError::ClosedByProbe),
            Err(error) => Err(error.into()),
        }
    }

    /// `server/discover` alone, waited for without a clock of its own (up to the request
    /// timeout, which the caller's start timeout cuts): modern, or an error for a server that
    /// is not (configured modern) and `initialize` otherwise.
    async fn discover_only(
        &self,
        probes: usize,
        why: Why,
        evidence: &str,
    ) -> Result<Handshake, ClientError> {
        match self.discover(probes).await? {
            Probed::Modern(result) => Ok(self.modern(result, why, evidence)),
            Probed::ModernWithout(versions) if self.options.protocol == Protocol::Modern => {
                Err(ClientError::UnsupportedVersion {
                    got: versions.join(", "),
                })
            }
            other if self.options.protocol == Protocol::Modern => Err(ClientError::NotModern {
                why: other.describe(),
            }),
            other => Err(ClientError::NotModern {
                why: format!("{evidence}, then {}", other.describe()),
            }),
        }
    }

    /// Sends `server/discover` (again while the server refuses its version naming it, at most
    /// `probes` times) and reads the answer.
    async fn discover(&self, probes: usize) -> Result<Probed, ClientError> {
        let params = self.discover_params()?;
        for asked in 1..=probes.max(1) {
            let answer = self
                .connection
                .request_tagged(
                    "server/discover",
                    Some(params.clone()),
                    self.options.timeout,
                    None,
                )
                .await;
            if matches!(answer, Err(RpcError::Closed | RpcError::NotSent)) {
                return Err(ClientError::ClosedByProbe);
            }
            match probed(answer) {
                Probed::Again if asked < probes => continue,
                Probed::Again => break,
                other => return Ok(other),
            }
        }
        Err(ClientError::UnsupportedVersion {
            got: format!("{MODERN_VERSION} by its own account, yet it refused it"),
        })
    }

    fn discover_params(&self) -> Result<Box<serde_json::value::RawValue>, ClientError> {
        modern::stamp(None, &self.identity, None).map_err(|e| ClientError::Malformed {
            method: "server/discover".to_owned(),
            reason: e.to_string(),
        })
    }

    fn initialize_params(&self) -> Value {
        json!({
            "protocolVersion": OFFERED_VERSION,
            "capabilities": self.options.handlers.capabilities(),
            "clientInfo": self.options.client_info,
        })
    }

    /// Sends `initialize` and waits for its answer.
    async fn initialize(&self) -> Result<Response, RpcError> {
        let params = self.initialize_params();
        self.connection
            .request("initialize", Some(params), self.options.timeout)
            .await
    }

    /// The answer to `initialize`: the one sent behind the probe (`sent`), or one sent now.
    async fn initialize_behind(&self, sent: Option<Sent>) -> Result<Response, RpcError> {
        match sent {
            Some(mut sent) => self.within_timeout(sent.answer()).await,
            None => self.initialize().await,
        }
    }

    async fn within_timeout(
        &self,
        answer: impl std::future::Future<Output = Result<Response, RpcError>>,
    ) -> Result<Response, RpcError> {
        tokio::time::timeout(self.options.timeout, answer)
            .await
            .unwrap_or_else(|_| {
                Err(RpcError::Timeout {
                    method: "initialize".to_owned(),
                    after: self.options.timeout,
                })
            })
    }

    fn modern(&self, result: Value, why: Why, evidence: &str) -> Handshake {
        Handshake {
            modern: Some(self.identity.clone()),
            version: MODERN_VERSION.to_owned(),
            answer: result,
            discovery: Discovery {
                era: Era::Modern,
                why,
                evidence: evidence.to_owned(),
            },
        }
    }

    /// The legacy handshake finished with the server's answer to `initialize`.
    async fn legacy(
        &self,
        response: Response,
        why: Why,
        evidence: &str,
    ) -> Result<Handshake, ClientError> {
        let malformed = |reason: String| ClientError::Malformed {
            method: "initialize".to_owned(),
            reason,
        };
        let answer = response.result().map_err(|e| malformed(e.to_string()))?;
        let version = answer
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("no protocolVersion".to_owned()))?
            .to_owned();
        if !ACCEPTED_VERSIONS.contains(&version.as_str()) {
            return Err(ClientError::UnsupportedVersion { got: version });
        }
        self.connection
            .notify("notifications/initialized", None)
            .await?;
        Ok(Handshake {
            modern: None,
            version,
            answer,
            discovery: Discovery {
                era: Era::Legacy,
                why,
                evidence: evidence.to_owned(),
            },
        })
    }
}

/// Whether an error refuses the legacy handshake naming the modern version (a modern server's
/// answer to `initialize`).
fn names_modern(error: &RpcError) -> bool {
    matches!(error, RpcError::Remote(ErrorObject { code, data, .. })
        if *code == codes::UNSUPPORTED_PROTOCOL_VERSION
            && data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|v| v == MODERN_VERSION)))
}

/// Whether an error is the HTTP front's refusal to authorize the request (401 or 403 once the
/// login and step-up allowed were spent, or no credentials to be had): it says nothing of the era.
fn refuses_authorization(error: &RpcError) -> bool {
    matches!(
        error,
        RpcError::Transport(
            TransportError::Http {
                status: Some(401 | 403),
                ..
            } | TransportError::Auth { .. }
        )
    )
}

/// A failure to send once the probe is out: a closed connection is the probe's doing.
fn after_probe(error: RpcError) -> ClientError {
    match error {
        RpcError::Closed | RpcError::NotSent => ClientError::ClosedByProbe,
        other => other.into(),
    }
}

fn raw(value: &Value) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(value).expect("a Value serializes")
}
