//! The HTTP front's connections: at most [`HttpOptions::max_connections`](super::HttpOptions)
//! open, and at most [`HttpOptions::max_connections_per_address`](super::HttpOptions) from one
//! address, without locking new clients out.
//!
//! A connection is idle while no request is being answered on it (it waits for its first
//! request, or for its next one on keep-alive). When a new connection would pass a bound, the
//! connection idle longest (from that address, for the per-address bound) is closed to make
//! room; only when every connection is busy answering is the new one refused (closed at once).
//! So clients that open connections and hold them idle, however many and however fast they
//! come back, cannot keep another client out; a client's requests in flight are never cut.
//!
//! A connection is also closed by hyper once it has been idle for the header read timeout.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::sessions::session::wait_until;
use crate::wire::lock;

/// The most connections from one address unless configured
/// (`gateway.maxConnectionsPerAddress`). A quarter of [`super::MAX_CONNECTIONS`]: one address
/// (one machine, or one address behind NAT) cannot take every place. Behind a load balancer
/// every connection comes from the balancer's address: raise it to `maxConnections` there.
pub const MAX_CONNECTIONS_PER_ADDRESS: usize = 1_024;

/// The open connections.
pub(super) struct Connections {
    state: Mutex<State>,
    /// Told when a connection closes.
    closed: Notify,
    max: usize,
    per_address: usize,
}

#[derive(Default)]
struct State {
    open: HashMap<u64, Open>,
    next: u64,
}

struct Open {
    address: IpAddr,
    /// Requests being answered on it (their responses not yet fully sent).
    busy: usize,
    /// Since when nothing is being answered on it.
    idle_since: Instant,
    /// Told to close it (it is being closed: no longer counted).
    close: Arc<Notify>,
    closing: bool,
}

/// What happened when a connection was admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Admitted {
    /// There was room.
    Room,
    /// An idle connection is being closed to make room.
    Evicted,
}

/// A connection's place, held while it is open; told when to close.
pub(super) struct Place {
    connections: Arc<Connections>,
    id: u64,
    close: Arc<Notify>,
}

/// A request being answered on a connection, from its arrival until its response is sent.
pub(super) struct Working {
    connections: Arc<Connections>,
    id: u64,
}

impl Connections {
    pub(super) fn new(max: usize, per_address: usize) -> Connections {
        Connections {
            state: Mutex::default(),
            closed: Notify::new(),
            max,
            per_address,
        }
    }

    /// A place for a new connection from `address`, made by closing the longest idle one where
    /// a bound is reached; `None` when every connection in the way is busy (refused).
    pub(super) fn admit(self: &Arc<Self>, address: IpAddr) -> Option<(Place, Admitted)> {
        let mut state = lock(&self.state);
        let mut admitted = Admitted::Room;
        let from = state
            .open
            .values()
            .filter(|c| !c.closing && c.address == address)
            .count();
        if from >= self.per_address {
            state.evict(|c| c.address == address)?;
            admitted = Admitted::Evicted;
        }
        let open = state.open.values().filter(|c| !c.closing).count();
        if open >= self.max {
            state.evict(|_| true)?;
            admitted = Admitted::Evicted;
        }
        let id = state.next;
        state.next += 1;
        let close = Arc::new(Notify::new());
        state.open.insert(
            id,
            Open {
                address,
                busy: 0,
                idle_since: Instant::now(),
                close: close.clone(),
                closing: false,
            },
        );
        Some((
            Place {
                connections: self.clone(),
                id,
                close,
            },
            admitted,
        ))
    }

    /// How many connections are open (being closed included).
    pub(super) fn len(&self) -> usize {
        lock(&self.state).open.len()
    }

    /// Waits at most `grace` for every connection to close; whether they did.
    pub(super) async fn all_closed(&self, grace: Duration) -> bool {
        tokio::time::timeout(grace, wait_until(&self.closed, || self.len() == 0))
            .await
            .is_ok()
    }
}

impl State {
    /// Tells the longest idle connection `among` admits to close; `None` when there is none.
    fn evict(&mut self, among: impl Fn(&Open) -> bool) -> Option<()> {
        let victim = self
            .open
            .values_mut()
            .filter(|c| !c.closing && c.busy == 0 && among(c))
            .min_by_key(|c| c.idle_since)?;
        victim.closing = true;
        // A permit is kept if its task is not waiting yet.
        victim.close.notify_one();
        Some(())
    }
}

impl Place {
    /// Resolves when the connection is to close to make room.
    pub(super) async fn evicted(&self) {
        self.close.notified().await;
    }

    /// A request arrived on it.
    pub(super) fn working(&self) -> Working {
        if let Some(open) = lock(&self.connections.state).open.get_mut(&self.id) {
            open.busy += 1;
        }
        Working {
            connections: self.connections.clone(),
            id: self.id,
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        lock(&self.connections.state).open.remove(&self.id);
        self.connections.closed.notify_waiters();
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        if let Some(open) = lock(&self.connections.state).open.get_mut(&self.id) {
            open.busy = open.busy.saturating_sub(1);
            if open.busy == 0 {
                open.idle_since = Instant::now();
            }
        }
    }
}

/// A response body that keeps its request's [`Working`] until it is sent (or dropped): an SSE
/// stream keeps its connection busy for as long as it is open.
pub(super) struct Guarded {
    body: axum::body::Body,
    _working: Working,
}

impl Guarded {
    pub(super) fn new(body: axum::body::Body, working: Working) -> Guarded {
        Guarded {
            body,
            _working: working,
        }
    }
}

impl http_body::Body for Guarded {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[tokio::test]
    async fn the_longest_idle_makes_room_and_a_busy_one_never_does() {
        let connections = Arc::new(Connections::new(3, 2));
        let (first, _) = connections.admit(address(1)).unwrap();
        let (second, _) = connections.admit(address(1)).unwrap();
        let busy = second.working();
        // Per address: the idle one of 127.0.0.1 goes, not the busy one.
        let (third, admitted) = connections.admit(address(1)).unwrap();
        assert_eq!(admitted, Admitted::Evicted);
        tokio::time::timeout(Duration::from_secs(1), first.evicted())
            .await
            .expect("the idle connection is told to close");
        drop(first);
        // In all: 127.0.0.2 takes the third place; the fourth connection needs one closed.
        let (_fourth, admitted) = connections.admit(address(2)).unwrap();
        assert_eq!(admitted, Admitted::Room);
        let (_fifth, admitted) = connections.admit(address(3)).unwrap();
        assert_eq!(admitted, Admitted::Evicted);
        tokio::time::timeout(Duration::from_secs(1), third.evicted())
            .await
            .expect("the longest idle connection is told to close");
        // Every remaining connection busy: a new one is refused.
        let _all = [_fourth.working(), _fifth.working()];
        drop(third);
        assert!(connections.admit(address(4)).is_none());
        drop(busy);
        assert!(
            connections.admit(address(4)).is_some(),
            "once the second is idle again"
        );
    }
}
