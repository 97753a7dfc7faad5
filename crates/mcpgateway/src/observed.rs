//! Where the gateway tells [`crate::Observe`] what happened to its sessions and servers, and
//! to a client's answers: the hooks of the hub and the bridge, kept here so that the paths
//! they sit on stay as they were.

use crate::bridge::Bridge;
use crate::gateway::Hub;
use crate::upstream::{Report, State, Upstream};
use crate::{Gateway, Observe};
use mcpclient::ElicitationRequest;

impl Gateway {
    /// The gateway's metrics, audit log and tracer.
    pub fn observe(&self) -> &Observe {
        &self.hub.options.observe
    }
}

impl Hub {
    /// Counts the sessions open now.
    pub(crate) fn observe_sessions(&self) {
        self.options
            .observe
            .sessions(self.registry.sessions().len());
    }

    /// Every server, as not running yet.
    pub(crate) fn observe_upstreams(&self) {
        for upstream in self.upstreams.iter() {
            self.options.observe.upstream_known(upstream.name());
        }
    }

    /// A server started, went down or listed again: its state, its restarts, and the time its
    /// new tool list took to compile.
    pub(crate) fn observe_report(&self, upstream: &Upstream, report: &Report) {
        let observe = &self.options.observe;
        let connected = matches!(report, Report::State(_));
        let running = match report {
            Report::State(State::Ready(running)) => {
                observe.upstream(upstream.name(), true);
                Some(running.clone())
            }
            Report::State(State::Down(_)) => {
                observe.upstream(upstream.name(), false);
                None
            }
            Report::ListsChanged => upstream.running(),
            _ => None,
        };
        if let Some(running) = running {
            let (listing, took) = running.client.tools_compiled();
            observe.compiled(upstream.name(), listing, took, connected);
        }
    }
}

impl Bridge {
    /// The client's answer to `request` violated its `requestedSchema` (`problems`): counted
    /// and audited, under the session that answered when it can be told.
    pub(crate) fn refused(&self, request: &ElicitationRequest, problems: &[String]) {
        let session = match &self.session {
            Some(own) => own.upgrade(),
            None => self
                .registry
                .asker(self.upstream, "elicitation", request.during.as_deref())
                .ok()
                .map(|(session, _)| session),
        };
        self.observe
            .refused_answer(session.map(|s| s.serial), &self.name, problems);
    }
}
