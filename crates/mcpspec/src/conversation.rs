//! Checking the frames of one connection in wire order: requests are remembered by id so each
//! response is checked against the result type of the request it answers.

use std::collections::HashMap;

use serde_json::Value;

use crate::spec::Kind;
use crate::{Spec, SpecError};

/// Which end of the connection sent a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The MCP client.
    Client,
    /// The MCP server.
    Server,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// The frames of one connection, checked one by one in wire order.
pub struct Conversation<'s> {
    spec: &'s Spec,
    /// Requests awaiting an answer, by the side that sent them and their id's JSON text.
    pending: HashMap<(Side, String), String>,
}

impl<'s> Conversation<'s> {
    /// A new connection speaking `spec`'s version.
    pub fn new(spec: &'s Spec) -> Conversation<'s> {
        Conversation {
            spec,
            pending: HashMap::new(),
        }
    }

    /// Checks one frame sent by `from`; one flat line per problem, none when it is valid.
    /// A JSON array is a batch (2025-03-26): each member is checked in turn.
    ///
    /// # Errors
    /// [`SpecError::Compile`] when a definition the frame needs does not compile.
    pub fn check(&mut self, from: Side, frame: &Value) -> Result<Vec<String>, SpecError> {
        if let Value::Array(members) = frame {
            let mut lines = Vec::new();
            for (i, member) in members.iter().enumerate() {
                for line in self.check(from, member)? {
                    lines.push(format!("batch[{i}]: {line}"));
                }
            }
            return Ok(lines);
        }
        let spec = self.spec;
        let version = spec.version();
        let (response, error) = spec.envelopes();
        let id = frame.get("id").map(Value::to_string);
        if let Some(method) = frame.get("method") {
            let Some(method) = method.as_str() else {
                return spec.check(&["JSONRPCMessage"], None, frame);
            };
            let kind = if id.is_some() {
                Kind::Request
            } else {
                Kind::Notification
            };
            let (envelope, what) = match kind {
                Kind::Request => ("JSONRPCRequest", "request"),
                Kind::Notification => ("JSONRPCNotification", "notification"),
            };
            let Some(definition) = spec.method_definition(from, kind, method) else {
                let mut lines = spec.check(&[envelope], None, frame)?;
                lines.push(format!(
                    "$.method: '{method}' is not a {} {what} in {version}",
                    from.name()
                ));
                return Ok(lines);
            };
            let definition = definition.to_owned();
            if let Some(id) = id {
                self.pending.insert((from, id), definition.clone());
            }
            return spec.check(&[envelope, &definition], None, frame);
        }
        let answered = id.and_then(|id| self.pending.remove(&(from.other(), id)));
        if frame.get("error").is_some() {
            return spec.check(&[error], None, frame);
        }
        if frame.get("result").is_some() {
            let Some(request) = answered else {
                let mut lines = spec.check(&[response], None, frame)?;
                lines.push(format!(
                    "$.id: answers no pending {} request",
                    from.other().name()
                ));
                return Ok(lines);
            };
            // 2026-07-28: a request that needs input is answered with an InputRequiredResult.
            let needs_input = frame.pointer("/result/resultType")
                == Some(&Value::String("input_required".to_owned()));
            let result = if needs_input && spec.has_definition("InputRequiredResult") {
                "InputRequiredResult".to_owned()
            } else {
                spec.result_definition(&request)
            };
            return spec.check(&[response], Some(&result), frame);
        }
        let mut lines = spec.check(&["JSONRPCMessage"], None, frame)?;
        if lines.is_empty() {
            lines.push("$: not a request, notification, response or error".to_owned());
        }
        Ok(lines)
    }

    /// Checks one frame and fails the test on the first invalid one, with its flat lines and
    /// the frame itself.
    ///
    /// # Panics
    /// When the frame violates the protocol schema, or a definition does not compile.
    pub fn assert_valid(&mut self, from: Side, frame: &Value) {
        if let Some(problems) = self.problems(from, frame) {
            panic!("{problems}\nframe: {frame}");
        }
    }

    /// What is wrong with `frame`, as one message with a line per problem; `None` when it is
    /// valid. Records it like [`Conversation::check`].
    pub fn problems(&mut self, from: Side, frame: &Value) -> Option<String> {
        match self.check(from, frame) {
            Ok(lines) if lines.is_empty() => None,
            Ok(lines) => Some(format!(
                "invalid {} frame for {}:\n{}",
                from.name(),
                self.spec.version(),
                lines.join("\n")
            )),
            Err(err) => Some(err.to_string()),
        }
    }
}
