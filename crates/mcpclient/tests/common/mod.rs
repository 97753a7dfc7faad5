//! What the HTTP tests' loopback servers share.

// Each test file that shares this module uses a part of it.
#![allow(dead_code)]

use std::io::Read;
use std::net::TcpStream;

use serde_json::Value;

/// Largest request a test server reads.
const MAX_REQUEST_BYTES: usize = 1 << 20;

/// One request read from `stream`: its JSON-RPC body, or `None` at the end of the stream.
pub(crate) fn read_request(stream: &mut TcpStream) -> Option<Value> {
    let (_, body) = read_whole(stream)?;
    serde_json::from_slice(&body).ok()
}

/// One whole request read from `stream` (its body to the end, so that a close after the answer
/// is not a reset): its head and its body; `None` at the end of the stream.
pub(crate) fn read_whole(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).into_owned();
            let length: usize = head
                .to_ascii_lowercase()
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + length {
                return Some((head, got[end + 4..end + 4 + length].to_vec()));
            }
        }
        assert!(got.len() < MAX_REQUEST_BYTES, "request too large");
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A current-thread runtime with its timers and I/O, for a test's client.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}
