//! The gateway's sessions and the calls they have in flight upstream, and the one rule for
//! whom a server's question goes to. Below everything that routes: the bridge asks it, the
//! request paths register calls in it, the hub broadcasts through it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use mcpclient::{codes, Frame};

use crate::sessions::session::Session;
use crate::wire::lock;

/// The sessions (weakly: a session ends when its owner drops it) and the calls in flight.
#[derive(Default)]
pub(crate) struct Registry {
    sessions: Mutex<Vec<Weak<Session>>>,
    /// The calls in flight upstream, by the tag they carry: whose call a server's question
    /// came with (the session, and its request's id).
    calls: Mutex<HashMap<String, (Weak<Session>, String)>>,
    next_call: AtomicU64,
}

/// A call registered under its tag while it is in flight upstream.
pub(crate) struct Tagged<'a> {
    calls: &'a Mutex<HashMap<String, (Weak<Session>, String)>>,
    pub(crate) tag: String,
}

impl Drop for Tagged<'_> {
    fn drop(&mut self) {
        lock(self.calls).remove(&self.tag);
    }
}

impl Registry {
    /// Counts `session` among the gateway's sessions (weakly: it ends when its owner drops it).
    pub(crate) fn register(&self, session: &Arc<Session>) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    /// `session` is no longer one of the gateway's.
    pub(crate) fn forget(&self, session: &Arc<Session>) {
        lock(&self.sessions)
            .retain(|s| s.strong_count() > 0 && !s.ptr_eq(&Arc::downgrade(session)));
    }

    pub(crate) fn sessions(&self) -> Vec<Arc<Session>> {
        lock(&self.sessions)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Sends `frame` (a list change) to every client that has initialized, and to the modern
    /// listeners that opted in to it.
    pub(crate) fn broadcast(&self, frame: &Frame) {
        let method = frame
            .head()
            .and_then(|h| h.method.map(|m| m.into_owned()))
            .unwrap_or_default();
        for session in self.sessions() {
            if session.protocol_version().is_some() || session.listens_to(&method) {
                session.send(frame.clone(), None);
            }
        }
    }

    /// Registers a call of `session`'s request `id` going upstream; its tag goes with it, and
    /// it is forgotten when the returned guard drops.
    pub(crate) fn tag(&self, session: &Arc<Session>, id: &str) -> Tagged<'_> {
        let tag = format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed));
        lock(&self.calls).insert(tag.clone(), (Arc::downgrade(session), id.to_owned()));
        Tagged {
            calls: &self.calls,
            tag,
        }
    }

    /// The client to ask what server `upstream` wants to know, never a guess:
    /// - the session whose call the question came with (`during`: the transport said);
    /// - else the one session with calls in flight to the server (its newest call);
    /// - for `roots` with no call in flight, the one session that declared roots.
    ///
    /// Several candidates make the question ambiguous; a candidate that did not declare
    /// `capability` is not asked.
    pub(crate) fn asker(
        &self,
        upstream: usize,
        capability: &str,
        during: Option<&str>,
    ) -> Result<Asked, NoAsker> {
        let declared = |session: Arc<Session>, id: Option<String>| {
            if session.declares(capability) {
                Ok((session, id))
            } else {
                Err(NoAsker::Undeclared)
            }
        };
        let tagged = during.and_then(|tag| {
            let calls = lock(&self.calls);
            let (session, id) = calls.get(tag)?;
            Some((session.upgrade()?, id.clone()))
        });
        if let Some((session, id)) = tagged {
            return declared(session, Some(id));
        }
        let sessions = self.sessions();
        let mut calling: Vec<(Arc<Session>, String)> = sessions
            .iter()
            .filter_map(|s| s.newest_call_to(upstream).map(|(_, id)| (s.clone(), id)))
            .collect();
        match calling.len() {
            1 => {
                let (session, id) = calling.remove(0);
                declared(session, Some(id))
            }
            0 if capability == "roots" => {
                let mut declaring: Vec<Arc<Session>> = sessions
                    .iter()
                    .filter(|s| s.declares(capability) && !s.is_modern())
                    .cloned()
                    .collect();
                match declaring.len() {
                    0 => Err(NoAsker::Undeclared),
                    1 => {
                        // A shared server's roots are every client's: one principal's may be
                        // its roots only while no other principal is connected.
                        let only = declaring.remove(0);
                        let others = sessions
                            .iter()
                            .filter(|s| s.protocol_version().is_some())
                            .filter(|s| !s.principal().is(only.principal()))
                            .count();
                        match others {
                            0 => Ok((only, None)),
                            sessions => Err(NoAsker::Others { sessions }),
                        }
                    }
                    n => Err(NoAsker::Ambiguous { sessions: n }),
                }
            }
            0 => Err(NoAsker::Undeclared),
            n => Err(NoAsker::Ambiguous { sessions: n }),
        }
    }
}

/// The session a server's question goes to, and the id of its request the question belongs
/// to (for the HTTP front: the stream it goes out on).
pub(crate) type Asked = (Arc<crate::sessions::session::Session>, Option<String>);

/// Why a server's question reaches no client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoAsker {
    /// The session it belongs to did not declare the capability, or no session did.
    Undeclared,
    /// Several sessions have calls in flight to the server and nothing tells whose call asked.
    Ambiguous {
        /// How many sessions.
        sessions: usize,
    },
    /// `roots/list` with no call in flight: one session declared roots, and sessions of other
    /// principals are connected, for whom the roots would count as well.
    Others {
        /// How many sessions of other principals.
        sessions: usize,
    },
}

impl NoAsker {
    /// The JSON-RPC error code a server is refused with.
    pub(crate) fn code(&self) -> i64 {
        match self {
            NoAsker::Undeclared => codes::METHOD_NOT_FOUND,
            NoAsker::Ambiguous { .. } | NoAsker::Others { .. } => codes::INTERNAL_ERROR,
        }
    }
}

impl std::fmt::Display for NoAsker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoAsker::Undeclared => f.write_str("the client this belongs to did not declare the capability"),
            NoAsker::Ambiguous { sessions } => write!(
                f,
                "{sessions} clients have calls in flight to this server and it does not say whose call asked; \
                 not guessed (give the server \"isolation\": \"per-session\")"
            ),
            NoAsker::Others { sessions } => write!(
                f,
                "no call is in flight, and {sessions} sessions of other clients are connected: one client's \
                 roots would be this shared server's for them too; not given (give the server \"isolation\": \"per-session\")"
            ),
        }
    }
}
