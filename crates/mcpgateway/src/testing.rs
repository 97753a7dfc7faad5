//! What the gateway's in-memory tests share.

use std::sync::{Arc, Mutex};

use mcpclient::Frame;
use serde_json::Value;

use crate::sessions::session::Outbox;

/// An outbox that keeps what it is given, in order.
#[derive(Clone, Default)]
pub(crate) struct Kept(pub(crate) Arc<Mutex<Vec<Value>>>);

impl Outbox for Kept {
    fn send(&self, frame: Frame, _related: Option<&str>) {
        self.0.lock().unwrap().push(frame.value().unwrap());
    }

    fn finish(&self, _id: &str, response: Option<Frame>) {
        if let Some(frame) = response {
            self.0.lock().unwrap().push(frame.value().unwrap());
        }
    }
}

impl Kept {
    /// A copy of every frame kept so far.
    pub(crate) fn frames(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }
}
