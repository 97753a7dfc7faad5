//! The gateway's answers as they go on the wire, and the one way it takes a lock: the lowest
//! layer of the gateway, used by every module above it.

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard};

use mcpclient::{ErrorObject, Frame, Response};
use serde_json::value::RawValue;
use serde_json::Value;

/// A request's result, or its error.
pub(crate) type Answer = Result<Reply, ErrorObject>;

/// A request's result: made by the gateway, or a server's as it arrived, which the answer to
/// the client is written around without copying it ([`Response::into_answer`]).
#[derive(Debug)]
pub(crate) enum Reply {
    /// Made by the gateway (or changed by it).
    Made(Box<RawValue>),
    /// A server's response, passed on as it came.
    Forwarded(Response),
    /// A server's response passed on with texts written into its result, each before the byte
    /// of the result it names ([`Response::into_answer_with`]): the rest not copied.
    Completed(Response, Vec<(usize, String)>),
}

impl Reply {
    /// The result as JSON text.
    pub(crate) fn raw(&self) -> Cow<'_, RawValue> {
        match self {
            Reply::Made(raw) => Cow::Borrowed(raw),
            Reply::Forwarded(response) => Cow::Borrowed(response.result_raw()),
            Reply::Completed(response, inserts) => {
                match RawValue::from_string(mcpclient::written_into(
                    response.result_text(),
                    inserts,
                )) {
                    Ok(completed) => Cow::Owned(completed),
                    // The places come from the parse of the result they go into, so this does
                    // not happen; were it to, the server's result is kept as it came (nothing
                    // lost, nothing made up) and the fault is told.
                    Err(error) => {
                        tracing::error!(%error, "texts written into a result made it unreadable; the result is passed on as the server sent it");
                        Cow::Borrowed(response.result_raw())
                    }
                }
            }
        }
    }
}

impl From<Box<RawValue>> for Reply {
    fn from(raw: Box<RawValue>) -> Reply {
        Reply::Made(raw)
    }
}

/// `value` as the result of a request.
pub(crate) fn made(value: &Value) -> Answer {
    Ok(Reply::Made(raw(value)))
}

/// `value` as JSON text for an answer.
pub(crate) fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a Value serializes without error")
}

/// `null`, the id of an answer to a message whose id cannot be read.
pub(crate) fn null_id() -> &'static RawValue {
    static NULL: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| RawValue::from_string("null".to_owned()).expect("null is JSON"))
}

/// What a client is answered for text that is not a message the gateway takes: a parse error
/// (-32700) for no id; or, for a message that was read but is refused whole (nested deeper
/// than [`mcpclient::MAX_FRAME_DEPTH`]), -32600 for its id.
pub(crate) fn unreadable(error: &mcpclient::FrameError) -> (Box<RawValue>, ErrorObject) {
    use mcpclient::codes;
    let id = error
        .id()
        .and_then(|id| RawValue::from_string(id.to_owned()).ok());
    match id {
        Some(id) => (
            id,
            codes::error(codes::INVALID_REQUEST, format!("invalid request: {error}")),
        ),
        None => (
            null_id().to_owned(),
            codes::error(codes::PARSE_ERROR, format!("parse error: {error}")),
        ),
    }
}

/// The response frame for request `id`: the result's exact text, or the error.
pub(crate) fn response(id: &RawValue, answer: Answer) -> Frame {
    match answer {
        Ok(Reply::Made(result)) => Frame::response(id, Ok(&result)),
        Ok(Reply::Forwarded(response)) => response.into_answer(id),
        Ok(Reply::Completed(response, inserts)) => response.into_answer_with(id, inserts),
        Err(error) => Frame::response(id, Err(&error.to_raw())),
    }
}

/// Takes `m`'s lock; a panic elsewhere while holding it leaves the data as it was, and the
/// gateway goes on with it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(text: &str) -> Response {
        Response::from_frame(Frame::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn a_completed_result_reads_with_its_texts_and_never_as_something_else() {
        let result = r#"{"content":[],"_meta":{"a":1}}"#;
        let answer = |inserts: Vec<(usize, String)>| {
            let reply = Reply::Completed(
                response(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#)),
                inserts,
            );
            reply.raw().get().to_owned()
        };
        let close = result.len() - 1;
        assert_eq!(
            answer(vec![
                (close - 1, ",\"b\":2".into()),
                (close, ",\"resultType\":\"complete\"".into())
            ]),
            r#"{"content":[],"_meta":{"a":1,"b":2},"resultType":"complete"}"#
        );
        // Texts that would break the result: the server's result, as it came.
        assert_eq!(answer(vec![(close, ",\"x\":".into())]), result);
    }
}
