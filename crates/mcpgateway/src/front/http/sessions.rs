//! The HTTP front's session table: each session by its id, bound to the address and the
//! principal that opened it, and kept within two bounds.
//!
//! - **Per client** ([`HttpOptions::max_sessions_per_client`](super::HttpOptions), counted per
//!   [`Principal::quota_key`]): a client at its bound that opens another ends its own least
//!   recently active session with no request in flight; when all of its sessions are busy the
//!   new one is refused (429). A client that leaks sessions pays for it alone.
//! - **In all** ([`HttpOptions::max_sessions`](super::HttpOptions)): when the table is full, the
//!   sessions idle past their timeout end first, then the least recently active session with no
//!   request in flight, whether it holds a GET stream or not (a stream held open is not work in
//!   flight). When every session has a request in flight, the new one is refused (503).
//!
//! A session with a request in flight is never ended for another. An ended session's id is
//! unknown from then on (404), and its GET stream ends, so its client can start another.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::stream::Streams;
use crate::sessions::principal::Principal;
use crate::sessions::session::Session;
use crate::wire::lock;

/// The most sessions one client keeps at once unless configured
/// (`gateway.maxSessionsPerClient`), counted per [`Principal::quota_key`]: a principal of an
/// issuer, or the address of a client with the static token or none. A client opens a session
/// or a few; this leaves room for a desktop app's many windows and stops one client from
/// filling the table.
pub const MAX_SESSIONS_PER_CLIENT: usize = 64;

/// What the front keeps of one client session: the gateway's session (which knows its
/// principal), the address it was opened from and its GET stream.
pub(super) struct FrontSession {
    pub(super) session: Arc<Session>,
    /// The address of the client that opened it: the id is honoured from there only.
    pub(super) owner: IpAddr,
    pub(super) streams: Arc<Streams>,
    last_used: Mutex<Instant>,
}

impl FrontSession {
    pub(super) fn new(session: Arc<Session>, owner: IpAddr, streams: Arc<Streams>) -> Self {
        FrontSession {
            session,
            owner,
            streams,
            last_used: Mutex::new(Instant::now()),
        }
    }

    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    fn last_used(&self) -> Instant {
        *lock(&self.last_used)
    }

    /// No request in flight: it may be ended for another session.
    fn is_idle(&self) -> bool {
        self.session.requests_in_flight() == 0
    }
}

/// Why a new session was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// Its client holds its most sessions, each with a request in flight.
    PerClient,
    /// The table is full of sessions with requests in flight.
    Full,
}

/// Why sessions were ended to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// Idle past the idle timeout.
    Idle,
    /// The least recently active of its client's, past the per-client bound.
    PerClient,
    /// The least recently active in the full table.
    Full,
}

/// A session ended to make room, and why.
pub(super) type EndedSession = (Arc<FrontSession>, Ended);

/// The sessions, by id.
pub(super) struct Table {
    sessions: Mutex<HashMap<String, Arc<FrontSession>>>,
    max: usize,
    max_per_client: usize,
    idle_timeout: Duration,
}

/// Why a session id was not honoured, for the log (the answer is the same: 404).
pub(super) enum Miss {
    Unknown,
    OtherAddress(IpAddr),
    OtherPrincipal(String),
}

impl Table {
    pub(super) fn new(max: usize, max_per_client: usize, idle_timeout: Duration) -> Table {
        Table {
            sessions: Mutex::default(),
            max,
            max_per_client,
            idle_timeout,
        }
    }

    /// The session `id`, when `peer` and `principal` opened it; marked used.
    pub(super) fn get(
        &self,
        id: &str,
        peer: IpAddr,
        principal: &Principal,
    ) -> Result<Arc<FrontSession>, Miss> {
        let found = lock(&self.sessions).get(id).cloned();
        match found {
            None => Err(Miss::Unknown),
            Some(session) if session.owner != peer => Err(Miss::OtherAddress(session.owner)),
            Some(session) if !session.session.principal().is(principal) => Err(
                Miss::OtherPrincipal(session.session.principal().to_string()),
            ),
            Some(session) => {
                session.touch();
                Ok(session)
            }
        }
    }

    /// Keeps `session` under `id`, making room as the module says: the sessions ended (with
    /// why), to be closed whatever the outcome, and whether `session` was kept. A refusal ends
    /// only sessions idle past their timeout (which the sweep would end anyway).
    pub(super) fn insert(
        &self,
        id: String,
        session: Arc<FrontSession>,
    ) -> (Vec<EndedSession>, Result<(), Refused>) {
        let quota = session.session.principal().quota_key().to_owned();
        let ours = |s: &FrontSession| s.session.principal().quota_key() == quota;
        let mut sessions = lock(&self.sessions);
        let mut ended = Vec::new();
        if sessions.len() >= self.max {
            let timeout = self.idle_timeout;
            let idle: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.is_idle() && s.last_used().elapsed() >= timeout)
                .map(|(id, _)| id.clone())
                .collect();
            for id in idle {
                ended.extend(sessions.remove(&id).map(|s| (s, Ended::Idle)));
            }
        }
        let theirs = sessions.values().filter(|s| ours(s)).count();
        let per_client = if theirs >= self.max_per_client {
            match least_recent_idle(&sessions, |_, s| ours(s)) {
                Some(victim) => Some(victim),
                None => return (ended, Err(Refused::PerClient)),
            }
        } else {
            None
        };
        let left = sessions.len() - usize::from(per_client.is_some());
        let full = if left >= self.max {
            match least_recent_idle(&sessions, |id, _| per_client.as_deref() != Some(id)) {
                Some(victim) => Some(victim),
                None => return (ended, Err(Refused::Full)),
            }
        } else {
            None
        };
        for (victim, why) in [(per_client, Ended::PerClient), (full, Ended::Full)] {
            if let Some(removed) = victim.and_then(|id| sessions.remove(&id)) {
                ended.push((removed, why));
            }
        }
        sessions.insert(id, session);
        (ended, Ok(()))
    }

    /// Takes `session` out (its client ended it).
    pub(super) fn remove(&self, session: &Arc<FrontSession>) {
        lock(&self.sessions).retain(|_, s| !Arc::ptr_eq(s, session));
    }

    /// Takes out the sessions idle past the timeout: no request in flight, none for that long,
    /// no open GET stream.
    pub(super) fn take_idle(&self) -> Vec<Arc<FrontSession>> {
        let timeout = self.idle_timeout;
        let mut sessions = lock(&self.sessions);
        let ids: Vec<String> = sessions
            .iter()
            .filter(|(_, s)| {
                s.is_idle() && s.last_used().elapsed() >= timeout && !s.streams.is_open()
            })
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter().filter_map(|id| sessions.remove(id)).collect()
    }

    /// Takes out every session (the front is stopping).
    pub(super) fn take_all(&self) -> Vec<Arc<FrontSession>> {
        lock(&self.sessions).drain().map(|(_, s)| s).collect()
    }
}

/// The id of the least recently used session among those `among` admits that has no request in
/// flight.
fn least_recent_idle(
    sessions: &HashMap<String, Arc<FrontSession>>,
    among: impl Fn(&str, &FrontSession) -> bool,
) -> Option<String> {
    sessions
        .iter()
        .filter(|(id, s)| among(id, s) && s.is_idle())
        .min_by_key(|(_, s)| s.last_used())
        .map(|(id, _)| id.clone())
}
