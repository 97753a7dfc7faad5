//! The gateway's answers as they go on the wire, and the one way it takes a lock: the lowest
//! layer of the gateway, used by every module above it.

use std::sync::{Mutex, MutexGuard};

use mcpclient::{ErrorObject, Frame};
use serde_json::value::RawValue;
use serde_json::Value;

/// A request's result as JSON, or its error.
pub(crate) type Answer = Result<Box<RawValue>, ErrorObject>;

/// `value` as JSON text for an answer.
pub(crate) fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a Value serializes without error")
}

/// `null`, the id of an answer to a message whose id cannot be read.
pub(crate) fn null_id() -> &'static RawValue {
    static NULL: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| RawValue::from_string("null".to_owned()).expect("null is JSON"))
}

/// The response frame for request `id`: the result's exact text, or the error.
pub(crate) fn response(id: &RawValue, answer: Answer) -> Frame {
    match answer {
        Ok(result) => Frame::response(id, Ok(&result)),
        Err(error) => Frame::response(id, Err(&error.to_raw())),
    }
}

/// Takes `m`'s lock; a panic elsewhere while holding it leaves the data as it was, and the
/// gateway goes on with it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
