//! The time as tokens carry it: whole seconds since the Unix epoch (`exp`, `iat`, a stored
//! token's expiry). The lowest module of the crate: tokens, assertions and DPoP proofs all read
//! it, and it reads nothing of theirs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 for a clock set before it).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}
