//! Fair admission to a server: at most [`MAX_UPSTREAM_IN_FLIGHT`] requests in flight to one
//! server (shared connection), and past that the clients take turns. A server that answers one
//! request at a time answers them in the order they reach it, so without turns one client's
//! backlog (up to 256 requests in flight a session, and a 2026-07-28 client's requests are each
//! a session) would stand in front of every other client's call; with them, another client's
//! call waits for at most the requests in flight and one turn of each waiting client. Each
//! session opened with `initialize` takes its own turns; a client's 2026-07-28 requests take
//! theirs together ([`crate::sessions::session::Session::turn_key`]), so a burst of them buys no more turns.
//!
//! A call that waits on its client (the server asked it something) hands its place back while
//! it waits: the server is not working on it, and a client that parks calls must not hold the
//! places the others need.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::wire::lock;

/// Requests in flight to one server at once; more wait their session's turn.
pub const MAX_UPSTREAM_IN_FLIGHT: usize = 32;

/// The turns for one server.
#[derive(Default)]
pub(crate) struct Admission {
    state: Mutex<Turns>,
}

#[derive(Default)]
struct Turns {
    in_flight: usize,
    /// Each waiting client's requests, in order.
    waiting: HashMap<String, VecDeque<oneshot::Sender<()>>>,
    /// Whose turn is next: each waiting client once.
    order: VecDeque<String>,
}

/// A place in flight; handing it back lets the next waiting request in.
pub(crate) struct Slot {
    admission: Arc<Admission>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.admission.release();
    }
}

impl Admission {
    /// Waits for a place in flight for a request of `client` (a key that tells clients apart,
    /// made only when the request has to wait).
    pub(crate) async fn admit(self: &Arc<Self>, client: impl FnOnce() -> String) -> Slot {
        let waiting = {
            let mut turns = lock(&self.state);
            if turns.in_flight < MAX_UPSTREAM_IN_FLIGHT && turns.order.is_empty() {
                turns.in_flight += 1;
                None
            } else {
                let client = client();
                let (tell, told) = oneshot::channel();
                if !turns.waiting.contains_key(&client) {
                    turns.order.push_back(client.clone());
                }
                turns.waiting.entry(client).or_default().push_back(tell);
                Some(told)
            }
        };
        if let Some(told) = waiting {
            // The place is handed over with the message; a dropped sender cannot happen while
            // the admission lives (it is kept until the request is let in).
            let _ = told.await;
        }
        Slot {
            admission: self.clone(),
        }
    }

    /// A request left: the place goes to the next waiting request of the session whose turn it
    /// is, else it is freed.
    fn release(&self) {
        let mut turns = lock(&self.state);
        while let Some(client) = turns.order.pop_front() {
            let Some(queue) = turns.waiting.get_mut(&client) else {
                continue;
            };
            let mut handed = false;
            while let Some(tell) = queue.pop_front() {
                // A waiter that gave up (its call was cancelled) is skipped.
                if tell.send(()).is_ok() {
                    handed = true;
                    break;
                }
            }
            if queue.is_empty() {
                turns.waiting.remove(&client);
            } else {
                turns.order.push_back(client);
            }
            if handed {
                return;
            }
        }
        turns.in_flight -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_take_turns_once_the_server_is_full() {
        let admission = Arc::new(Admission::default());
        let mut held: Vec<Slot> = Vec::new();
        for _ in 0..MAX_UPSTREAM_IN_FLIGHT {
            held.push(admission.admit(|| "1".to_owned()).await);
        }
        // Session 1 queues three more, then session 2 one: 2's comes second, not fourth.
        let (done, mut order) = tokio::sync::mpsc::unbounded_channel();
        for (session, n) in [("1", 0), ("1", 1), ("1", 2), ("2", 0)] {
            let admission = admission.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let slot = admission.admit(|| session.to_owned()).await;
                done.send((session, n)).unwrap();
                drop(slot);
            });
            tokio::task::yield_now().await;
        }
        drop(done);
        held.pop();
        let mut seen = Vec::new();
        while let Some(item) = order.recv().await {
            seen.push(item);
        }
        assert_eq!(seen, [("1", 0), ("2", 0), ("1", 1), ("1", 2)]);
        drop(held);
        assert_eq!(lock(&admission.state).in_flight, 0);
    }
}
