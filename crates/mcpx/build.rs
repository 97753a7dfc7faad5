//! Records the commit mcpx is built from, for `mcpx --version`, as `MCPX_COMMIT`: the
//! variable of that name when the builder sets it (a distribution building from a tarball),
//! else `git` when the crate sits in its own repository (a clone, or `cargo install --git`),
//! else the `.cargo_vcs_info.json` that `cargo package` writes, else `unknown`.
//!
//! Only the commit is recorded, not whether the tree had changes: that would rebuild the crate
//! at every edit. The script runs again when `HEAD` or the branch it names moves.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MCPX_COMMIT");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = std::env::var("MCPX_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| from_git(&manifest))
        .or_else(|| from_vcs_info(&manifest))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=MCPX_COMMIT={commit}");
}

/// `git` in `dir`, trimmed; `None` when it fails or is missing.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The commit's short hash and date (`1a2b3c4d5e6f 2026-12-06`), when `manifest` is this crate
/// in mcpx's own repository (not a tarball unpacked inside some other repository).
fn from_git(manifest: &Path) -> Option<String> {
    let top = PathBuf::from(git(manifest, &["rev-parse", "--show-toplevel"])?);
    if !top.join("crates/mcpx/Cargo.toml").is_file() {
        return None;
    }
    let described = git(manifest, &["log", "-1", "--format=%h %cs", "--abbrev=12"])?;
    // Run again when the commit changes: HEAD itself (a checkout), the branch it names, and
    // packed-refs (where git may move that branch).
    let absolute = |what: &str| {
        git(manifest, &["rev-parse", "--path-format=absolute", what]).map(PathBuf::from)
    };
    let (git_dir, common) = (absolute("--git-dir"), absolute("--git-common-dir"));
    let branch = git(manifest, &["symbolic-ref", "-q", "HEAD"]);
    let mut watched = Vec::new();
    if let Some(git_dir) = &git_dir {
        watched.push(git_dir.join("HEAD"));
    }
    if let Some(common) = &common {
        if let Some(branch) = &branch {
            watched.push(common.join(branch));
        }
        watched.push(common.join("packed-refs"));
    }
    // A path that does not exist would make cargo run the script at every build.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    Some(described)
}

/// The commit `cargo package` recorded (`"sha1": "…"` in `.cargo_vcs_info.json`), shortened.
fn from_vcs_info(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest.join(".cargo_vcs_info.json")).ok()?;
    let start = text.find("\"sha1\"")?;
    let rest = &text[start + "\"sha1\"".len()..];
    let hash: String = rest
        .trim_start_matches(|c: char| c == ':' || c == '"' || c.is_whitespace())
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .take(12)
        .collect();
    (hash.len() == 12).then_some(hash)
}
