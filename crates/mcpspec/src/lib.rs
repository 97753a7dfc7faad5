//! Test-only: checks MCP protocol frames against the official protocol schema of a version.
//!
//! The schemas are the specification's own `schema.json` files (draft-07 for 2024-11-05 …
//! 2025-06-18, 2020-12 after), read at test time from `../shared/mcp-spec/<version>/`. A frame is
//! checked against the definition its shape and method call for: a request or notification by
//! its `method` and the side that sent it, a response by the method of the request it answers
//! (matched by id, from the other side), an error by the error envelope. A method the version
//! does not define for that side is reported, never passed.
//!
//! Never linked into the `mcpx` binary.

#![deny(missing_docs)]

mod conversation;
mod location;
mod recording;
mod spec;
mod transcript;

pub use conversation::{Conversation, Side};
pub use location::{spec_dir, spec_or_skip, VERSIONS};
pub use recording::{Recording, RecordingSink, RecordingSource};
pub use spec::{Spec, SpecError};
pub use transcript::check_transcript;
