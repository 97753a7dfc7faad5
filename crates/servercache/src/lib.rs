//! What mcpx keeps about each MCP server between runs, in files under a cache directory the
//! caller names (the library reads no environment): the protocol era a server speaks
//! ([`EraMemory`], so that its next start needs no probe) and its tool list ([`ToolCache`],
//! so that listing and searching tools need not start every server).
//!
//! Everything here is a cache: a file that is missing, unreadable, too large, corrupt or stale
//! is a miss, never an error the command fails on. Files are written whole under a temporary
//! name and renamed into place, so a reader sees the old file or the new one; two runs writing
//! the same entry leave one of the two. No file holds an environment variable's value or a
//! header: keys are SHA-256 digests of what identifies a server, and the contents are what the
//! server itself said (its era, its tools, its name and version).

#![deny(missing_docs)]

mod eras;
mod files;
mod key;
mod tools;

pub use eras::{EraMemory, Remembered, ERA_MEMORY_MAX_AGE, MAX_ERA_BYTES};
pub use files::{CacheError, MAX_ENTRIES};
pub use key::{digest, fingerprint};
pub use tools::{CachedList, ToolCache, MAX_TOOL_LIST_BYTES, TOOLS_FRESH_FOR};
