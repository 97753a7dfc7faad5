//! Stopping in two steps: drain, then stop.
//!
//! The first stop signal starts a drain: the fronts take no new sessions (the HTTP front answers
//! `initialize` and sessionless requests 503, and `/readyz` 503 so that a balancer stops sending),
//! while the requests in flight get up to a bound ([`DRAIN_TIMEOUT`] unless configured) to be
//! answered by their servers. Then, or at once on a second signal, what is still running is
//! answered "shutting down" and the servers are stopped. [`Stop`] is the handle the signals and
//! the fronts share; [`Gateway::drain`] is the wait.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::gateway::Gateway;

/// How long requests in flight get to finish once a drain starts, unless configured: within the
/// common 30 s a process gets between SIGTERM and SIGKILL (Kubernetes' default grace), leaving
/// room for the connections' last answers ([`crate::front::http::DRAIN_GRACE`]) and the servers' stop (two
/// [`mcpclient::STOP_GRACE`]s).
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// How often a drain looks whether the requests in flight are all answered.
const DRAIN_POLL: Duration = Duration::from_millis(20);

/// Where the gateway is in stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Phase {
    /// Taking new sessions and requests.
    Serving,
    /// No new sessions; the requests in flight finish.
    Draining,
    /// Stopping now: what is still in flight is answered "shutting down".
    Stopping,
}

/// The shared switch of the stop signals: [`Stop::drain`] on the first, [`Stop::now`] on the
/// second. Cloning it gives another handle to the same switch.
#[derive(Clone, Debug)]
pub struct Stop(Arc<watch::Sender<Phase>>);

impl Default for Stop {
    fn default() -> Stop {
        Stop(Arc::new(watch::Sender::new(Phase::Serving)))
    }
}

impl Stop {
    /// A switch at [`Phase::Serving`].
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Starts draining (nothing when draining or stopping already).
    pub fn drain(&self) {
        self.advance(Phase::Draining);
    }

    /// Stops now, drained or not.
    pub fn now(&self) {
        self.advance(Phase::Stopping);
    }

    /// The phase now.
    pub fn phase(&self) -> Phase {
        *self.0.borrow()
    }

    /// Whether new sessions are refused (draining or stopping).
    pub fn is_draining(&self) -> bool {
        self.phase() >= Phase::Draining
    }

    /// Completes once the phase is `phase` or later.
    pub async fn reached(&self, phase: Phase) {
        let mut phases = self.0.subscribe();
        // The sender lives in `self`, so the wait ends only by reaching the phase.
        let _ = phases.wait_for(|now| *now >= phase).await;
    }

    fn advance(&self, to: Phase) {
        self.0.send_if_modified(|now| {
            let later = *now < to;
            if later {
                *now = to;
            }
            later
        });
    }
}

impl Gateway {
    /// Requests of every session in flight now (taken and not yet answered).
    pub fn requests_in_flight(&self) -> usize {
        self.hub
            .registry
            .sessions()
            .iter()
            .map(|session| session.requests_in_flight())
            .sum()
    }

    /// Waits until no request is in flight, at most `within`, or until `stop` says
    /// [`Phase::Stopping`]; whether everything was answered. The fronts go on serving meanwhile.
    pub async fn drain(&self, within: Duration, stop: &Stop) -> bool {
        let in_flight = self.requests_in_flight();
        tracing::info!(
            in_flight,
            ?within,
            "draining: no new sessions; a second signal stops at once"
        );
        let idle = async {
            while self.requests_in_flight() > 0 {
                tokio::time::sleep(DRAIN_POLL).await;
            }
        };
        let drained = tokio::select! {
            () = idle => true,
            () = tokio::time::sleep(within) => false,
            () = stop.reached(Phase::Stopping) => self.requests_in_flight() == 0,
        };
        match self.requests_in_flight() {
            0 => tracing::info!("drained: every request in flight was answered"),
            left => tracing::info!(left, "the drain ends with requests in flight"),
        }
        drained
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_phases_only_move_forward() {
        let stop = Stop::new();
        assert_eq!(stop.phase(), Phase::Serving);
        assert!(!stop.is_draining());
        stop.drain();
        assert!(stop.is_draining());
        stop.reached(Phase::Draining).await;
        stop.now();
        stop.drain();
        assert_eq!(stop.phase(), Phase::Stopping);
        stop.reached(Phase::Draining).await;
        stop.reached(Phase::Stopping).await;
    }

    #[tokio::test]
    async fn a_gateway_with_nothing_in_flight_drains_at_once() {
        let gateway = Gateway::start(Vec::new(), crate::options::GatewayOptions::default());
        let stop = Stop::new();
        stop.drain();
        assert!(gateway.drain(Duration::from_secs(3600), &stop).await);
    }
}
