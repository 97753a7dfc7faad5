//! A frame decoded once into what routing needs: its kind, id, method and raw params. The
//! text itself is never rebuilt: the parts borrow from it.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::frame::{null, Wire};
use crate::Frame;

/// What a frame is, as JSON-RPC 2.0 and MCP define it.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request: a string `method` and an `id` that is a string or an integer.
    Request {
        /// The id, as written.
        id: &'a RawValue,
        /// The method.
        method: Cow<'a, str>,
        /// The params, as written.
        params: Option<&'a RawValue>,
    },
    /// A notification: a `method` and no `id`.
    Notification {
        /// The method.
        method: Cow<'a, str>,
        /// The params, as written.
        params: Option<&'a RawValue>,
    },
    /// A response: an `id` and exactly one of `result` and `error`.
    Response {
        /// The id, as written.
        id: &'a RawValue,
    },
    /// A batch (JSON-RPC 2.0, allowed by MCP 2025-03-26 only): its elements, as written.
    Batch(Vec<&'a RawValue>),
    /// None of these: the reason, and the id when one could be read (a response to the
    /// error carries it; JSON `null` otherwise).
    Invalid {
        /// The id, when it is a string or an integer.
        id: Option<&'a RawValue>,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Whether `id` is what MCP allows for a request id: a string or an integer.
fn valid_id(id: &RawValue) -> bool {
    let text = id.get();
    text.starts_with('"')
        || (!text.is_empty()
            && text
                .strip_prefix('-')
                .unwrap_or(text)
                .bytes()
                .all(|b| b.is_ascii_digit()))
}

impl Frame {
    /// The frame decoded once ([`Message`]).
    pub fn message(&self) -> Message<'_> {
        let text = self.text();
        if text.starts_with('[') {
            return match serde_json::from_str::<Vec<&RawValue>>(text) {
                Ok(elements) if !elements.is_empty() => Message::Batch(elements),
                Ok(_) => Message::Invalid {
                    id: None,
                    reason: "an empty batch",
                },
                Err(_) => Message::Invalid {
                    id: None,
                    reason: "a batch whose elements cannot be read",
                },
            };
        }
        let wire = match self.members() {
            // The members the parse that checked the frame found, read again alone: the
            // result and the error only for whether they are there.
            Some(members) => {
                let member = |span| {
                    self.member(span)
                        .and_then(|m| serde_json::from_str::<&RawValue>(m).ok())
                };
                Ok(Wire {
                    id: member(members.id),
                    method: member(members.method),
                    params: member(members.params),
                    result: members.result.map(|_| null()),
                    error: members.error.map(|_| null()),
                })
            }
            None => serde_json::from_str::<Wire<'_>>(text),
        };
        let Ok(wire) = wire else {
            return Message::Invalid {
                id: None,
                reason: "not a JSON-RPC message (a member is duplicated or of the wrong kind)",
            };
        };
        let id = wire.id.filter(|id| valid_id(id));
        if wire.id.is_some() && id.is_none() {
            return Message::Invalid {
                id: None,
                reason: "the id must be a string or an integer",
            };
        }
        match wire.method {
            Some(method) => {
                let Ok(method) = serde_json::from_str::<Cow<'_, str>>(method.get()) else {
                    return Message::Invalid {
                        id,
                        reason: "the method must be a string",
                    };
                };
                match id {
                    Some(id) => Message::Request {
                        id,
                        method,
                        params: wire.params,
                    },
                    None => Message::Notification {
                        method,
                        params: wire.params,
                    },
                }
            }
            None => match (id, wire.result.is_some(), wire.error.is_some()) {
                (Some(id), true, false) | (Some(id), false, true) => Message::Response { id },
                (id, _, _) => Message::Invalid {
                    id,
                    reason:
                        "neither a request (no method) nor a response (no single result or error)",
                },
            },
        }
    }
}

/// A frame decoded once, at the edge, into what routing needs, owning its parts: a front
/// decodes what arrives with [`Frame::decode`], looks at it for its own checks, and hands it on;
/// no later step parses the frame again. The kinds are [`Message`]'s.
#[derive(Debug)]
pub enum Decoded {
    /// A request.
    Request {
        /// The id, as written.
        id: Box<RawValue>,
        /// The method.
        method: String,
        /// The params, as written.
        params: Option<Box<RawValue>>,
    },
    /// A notification.
    Notification {
        /// The method.
        method: String,
        /// The params, as written.
        params: Option<Box<RawValue>>,
    },
    /// A response: its id, and the whole frame (handed to what waits for it).
    Response {
        /// The id, as written.
        id: Box<RawValue>,
        /// The response, as it came.
        frame: Frame,
    },
    /// A batch, each element decoded (an element that is no object is [`Decoded::Invalid`]).
    Batch(Vec<Decoded>),
    /// None of these: the reason, and the id when one could be read.
    Invalid {
        /// The id, when it is a string or an integer.
        id: Option<Box<RawValue>>,
        /// What is wrong.
        reason: &'static str,
    },
}

impl Decoded {
    /// The id of a request, response or invalid message that has a readable one.
    pub fn id(&self) -> Option<&RawValue> {
        match self {
            Decoded::Request { id, .. } | Decoded::Response { id, .. } => Some(id),
            Decoded::Invalid { id, .. } => id.as_deref(),
            Decoded::Notification { .. } | Decoded::Batch(_) => None,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Decoded::Request { method, .. } | Decoded::Notification { method, .. } => Some(method),
            _ => None,
        }
    }

    /// Whether it is a request.
    pub fn is_request(&self) -> bool {
        matches!(self, Decoded::Request { .. })
    }

    /// It, or for a batch each element (a batch holds no batch).
    pub fn each(&self) -> &[Decoded] {
        match self {
            Decoded::Batch(elements) => elements,
            one => std::slice::from_ref(one),
        }
    }
}

impl From<Frame> for Decoded {
    fn from(frame: Frame) -> Decoded {
        frame.decode()
    }
}

impl Frame {
    /// The frame decoded once ([`Decoded`]): [`Frame::message`], owned.
    pub fn decode(self) -> Decoded {
        let decoded = match self.message() {
            Message::Request { id, method, params } => Decoded::Request {
                id: id.to_owned(),
                method: method.into_owned(),
                params: params.map(RawValue::to_owned),
            },
            Message::Notification { method, params } => Decoded::Notification {
                method: method.into_owned(),
                params: params.map(RawValue::to_owned),
            },
            Message::Response { id } => {
                let id = id.to_owned();
                return Decoded::Response { id, frame: self };
            }
            Message::Batch(elements) => Decoded::Batch(
                elements
                    .iter()
                    .map(|element| match Frame::parse(element.get()) {
                        Ok(frame) if !element.get().starts_with('[') => frame.decode(),
                        _ => Decoded::Invalid {
                            id: None,
                            reason: "a batch element must be an object",
                        },
                    })
                    .collect(),
            ),
            Message::Invalid { id, reason } => Decoded::Invalid {
                id: id.map(RawValue::to_owned),
                reason,
            },
        };
        decoded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> String {
        match Frame::parse(text).unwrap().message() {
            Message::Request { id, method, params } => {
                format!(
                    "request {} {method} {}",
                    id.get(),
                    params.map_or("-", |p| p.get())
                )
            }
            Message::Notification { method, .. } => format!("notification {method}"),
            Message::Response { id } => format!("response {}", id.get()),
            Message::Batch(elements) => format!("batch of {}", elements.len()),
            Message::Invalid { id, reason } => {
                format!("invalid {}: {reason}", id.map_or("null", |i| i.get()))
            }
        }
    }

    #[test]
    fn decoded_owns_the_same_parts() {
        let frame = |t: &str| Frame::parse(t).unwrap();
        let request =
            frame(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{"n": 1E2}}"#).decode();
        assert_eq!(request.id().map(RawValue::get), Some(r#""a""#));
        assert_eq!(request.method(), Some("x"));
        let Decoded::Request { params, .. } = &request else {
            panic!("{request:?}")
        };
        assert_eq!(params.as_deref().map(RawValue::get), Some(r#"{"n": 1E2}"#));
        let text = r#"{"jsonrpc":"2.0","id":4,"result":{"k":1}}"#;
        let Decoded::Response { id, frame: kept } = frame(text).decode() else {
            panic!()
        };
        assert_eq!((id.get(), kept.text()), ("4", text));
        let batch = frame(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},[1],3,{"jsonrpc":"2.0","method":"n"}]"#,
        )
        .decode();
        let kinds: Vec<String> = batch
            .each()
            .iter()
            .map(|d| match d {
                Decoded::Invalid { reason, .. } => (*reason).to_owned(),
                other => other.method().unwrap_or_default().to_owned(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "ping",
                "a batch element must be an object",
                "a batch element must be an object",
                "n"
            ]
        );
        let invalid = frame(r#"{"jsonrpc":"2.0","id":4}"#).decode();
        assert_eq!(invalid.id().map(RawValue::get), Some("4"));
        assert!(!invalid.is_request());
    }

    #[test]
    fn messages_are_told_apart() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, "request 7 ping -"),
            (r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{"n": 1E2}}"#, r#"request "a" x {"n": 1E2}"#),
            (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "notification notifications/initialized"),
            (r#"{"jsonrpc":"2.0","id":4,"result":{}}"#, "response 4"),
            (r#"{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m"}}"#, "response 4"),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]"#, "batch of 2"),
            (r#"{"jsonrpc":"2.0","id":4}"#, "invalid 4: neither a request (no method) nor a response (no single result or error)"),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, "invalid null: the id must be a string or an integer"),
            (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, "invalid null: the id must be a string or an integer"),
            (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, "invalid null: the id must be a string or an integer"),
            (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, "invalid null: the id must be a string or an integer"),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, "invalid null: the id must be a string or an integer"),
            (r#"{"jsonrpc":"2.0","id":3,"method":7}"#, "invalid 3: the method must be a string"),
            (r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}"#, "invalid null: not a JSON-RPC message (a member is duplicated or of the wrong kind)"),
            ("[]", "invalid null: an empty batch"),
        ];
        for (text, want) in cases {
            assert_eq!(kind(text), want, "{text}");
        }
    }
}
