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

/// The modern protocol version: a request whose `_meta` names it is checked against its schema.
const MODERN: &str = "2026-07-28";

/// The `_meta` key naming a modern request's version.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The frames of one connection, checked one by one in wire order.
///
/// A connection can be legacy (`initialize` first, `spec`'s version) or modern (every request
/// names 2026-07-28 in its `_meta`; a client may probe with one and fall back to `initialize`):
/// each request is checked against the version it names, its answer against the same, and
/// other frames against the era the client last chose.
pub struct Conversation<'s> {
    spec: &'s Spec,
    /// Requests awaiting an answer, by the side that sent them and their id's JSON text: their
    /// definition, and whether they were modern.
    pending: HashMap<(Side, String), (String, bool)>,
    /// The client's last request was modern (and no `initialize` since).
    modern: bool,
}

/// The 2026-07-28 schema, loaded once (`None` when absent).
fn modern_spec() -> Option<&'static Spec> {
    static SPEC: std::sync::OnceLock<Option<Spec>> = std::sync::OnceLock::new();
    SPEC.get_or_init(|| crate::spec_or_skip(MODERN)).as_ref()
}

impl<'s> Conversation<'s> {
    /// A new connection speaking `spec`'s version.
    pub fn new(spec: &'s Spec) -> Conversation<'s> {
        Conversation {
            spec,
            pending: HashMap::new(),
            modern: spec.version() == MODERN,
        }
    }

    /// The spec a frame is checked against: the modern one when `modern` and it is there.
    fn spec_for(&self, modern: bool) -> &'s Spec {
        match modern_spec() {
            Some(spec) if modern => spec,
            _ => self.spec,
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
        let id = frame.get("id").map(Value::to_string);
        if from == Side::Client && id.is_some() {
            match frame.get("method").and_then(Value::as_str) {
                Some("initialize") => self.modern = false,
                Some(_) => {
                    let named = frame
                        .get("params")
                        .and_then(|p| p.get("_meta"))
                        .and_then(|m| m.get(META_VERSION))
                        .and_then(Value::as_str);
                    if let Some(named) = named {
                        self.modern = named == MODERN;
                    }
                }
                None => {}
            }
        }
        let answered = match frame.get("method") {
            None => id
                .as_ref()
                .and_then(|id| self.pending.remove(&(from.other(), id.clone()))),
            Some(_) => None,
        };
        let modern = answered.as_ref().map_or(self.modern, |(_, m)| *m);
        let spec = self.spec_for(modern);
        let version = spec.version();
        let (response, error) = spec.envelopes();
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
                self.pending
                    .insert((from, id), (definition.clone(), self.modern));
            }
            return spec.check(&[envelope, &definition], None, frame);
        }
        if frame.get("error").is_some() {
            return spec.check(&[error], None, frame);
        }
        if frame.get("result").is_some() {
            let Some((request, _)) = answered else {
                let mut lines = spec.check(&[response], None, frame)?;
                lines.push(format!(
                    "$.id: answers no pending {} request",
                    from.other().name()
                ));
                return Ok(lines);
            };
            let input_required =
                frame.pointer("/result/resultType") == Some(&Value::from("input_required"));
            let result = if input_required && spec.has_definition("InputRequiredResult") {
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
                self.spec_for(self.modern).version(),
                lines.join("\n")
            )),
            Err(err) => Some(err.to_string()),
        }
    }
}
