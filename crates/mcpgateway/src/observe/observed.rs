//! Where the gateway tells [`crate::observe::Observe`] what happened to its sessions and servers, and
//! to a client's answers: the hooks of the hub and the bridge, kept here so that the paths
//! they sit on stay as they were.

use crate::gateway::Gateway;
use crate::gateway::Hub;
use crate::observe::Observe;
use crate::protocol::conversation::Conversation;
use crate::sessions::bridge::Bridge;
use crate::upstream::{Report, State, Upstream};
use mcpclient::{ElicitationRequest, ErrorObject};
use serde_json::Value;

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

impl Hub {
    /// A modern client's `inputResponses` were refused (`invalid`, whose `data.violations` are
    /// the lines): counted and audited as a refused answer, under the server the conversation
    /// called.
    pub(crate) fn observe_refused_input(&self, call: &Conversation, invalid: &ErrorObject) {
        let lines: Vec<String> = invalid
            .data
            .as_ref()
            .and_then(|data| data.get("violations"))
            .and_then(Value::as_array)
            .map(|lines| {
                lines
                    .iter()
                    .filter_map(|l| l.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let server = call
            .session
            .upstreams_called()
            .first()
            .map_or("", |index| self.upstream_name(*index));
        self.options
            .observe
            .refused_answer(Some(call.session.serial), server, &lines);
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
