//! Interop tests live in `tests/`; `rmcp-peer` is a server written with the Rust SDK for them.
