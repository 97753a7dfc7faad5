//! Where the protocol schemas are, and what a test does when they are not there.

use std::path::PathBuf;

use crate::Spec;

/// The protocol versions whose schemas the project tests against, oldest first.
pub const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The folder holding `<version>/schema.json`: `$MCP_SPEC_DIR` when set, else `../shared/mcp-spec`
/// beside the project's root.
pub fn spec_dir() -> PathBuf {
    match std::env::var_os("MCP_SPEC_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/mcp-spec"
        )),
    }
}

/// The spec of `version`, or `None` after saying why on stderr when the schemas are absent (a
/// user's fresh clone). Under CI (`CI` set) an absent schema fails the test instead.
///
/// # Panics
/// When the schema is absent and `CI` is set, or present but unusable.
pub fn spec_or_skip(version: &str) -> Option<Spec> {
    let path = spec_dir().join(version).join("schema.json");
    if !path.is_file() {
        let msg = format!("MCP protocol schema not found at {}", path.display());
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        #[allow(clippy::print_stderr)] // a skipped test says so
        {
            eprintln!("skipped: {msg}");
        }
        return None;
    }
    match Spec::from_file(version, &path) {
        Ok(spec) => Some(spec),
        Err(err) => panic!("{err}"),
    }
}
