//! The names the gateway exposes: `SERVER__NAME`, shortened past [`MAX_EXPOSED_NAME`] with a
//! hash of the whole name, so the mapping is the same on every start; and the glob patterns of
//! `allowTools`/`denyTools`.

/// The longest tool or prompt name the gateway exposes (the limit of common LLM APIs). Longer
/// names keep their start and end in a hash of the whole name.
pub const MAX_EXPOSED_NAME: usize = 64;

/// Between the server's name and the tool's (or prompt's) in an exposed name.
pub const SEPARATOR: &str = "__";

/// Hex digits of the hash that ends a shortened name.
const HASH_DIGITS: usize = 8;

/// The prefix of a server's exposed names unless its config says otherwise: `SERVER__`.
pub fn default_prefix(server: &str) -> String {
    format!("{server}{SEPARATOR}")
}

/// The name a tool or prompt is exposed under: `prefix` (the server's, [`default_prefix`]
/// unless configured; empty exposes names as they are) and its name, shortened past
/// [`MAX_EXPOSED_NAME`] bytes.
pub fn exposed_name(prefix: &str, name: &str) -> String {
    let full = format!("{prefix}{name}");
    if full.len() <= MAX_EXPOSED_NAME {
        return full;
    }
    let hash = fnv1a(full.as_bytes());
    let mut keep = MAX_EXPOSED_NAME - 1 - HASH_DIGITS;
    while !full.is_char_boundary(keep) {
        keep -= 1;
    }
    format!(
        "{}_{:0width$x}",
        &full[..keep],
        hash >> 32,
        width = HASH_DIGITS
    )
}

/// FNV-1a, 64 bits: fixed by its definition, so names stay stable across builds and restarts
/// (std's hasher promises neither).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Which of a server's tools are exposed: those matching any `allow` pattern (all when there
/// are none) and no `deny` pattern. Patterns are globs: `*` any run of characters, `?` one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// `allowTools`.
    pub allow: Vec<String>,
    /// `denyTools`.
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool called `name` is exposed.
    pub fn admits(&self, name: &str) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|p| glob(p, name)))
            && !self.deny.iter().any(|p| glob(p, name))
    }
}

/// Whether `text` matches the glob `pattern` (`*` and `?`), in time linear in their product.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    // Where the last `*` was, and where in the text it started matching.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_joined_and_long_ones_shortened_stably() {
        assert_eq!(exposed_name("demo__", "get-sum"), "demo__get-sum");
        let long = "a_tool_with_a_name_that_goes_on_and_on_well_past_the_limit";
        let name = exposed_name("github__", long);
        assert_eq!(name.len(), MAX_EXPOSED_NAME);
        assert!(name.starts_with("github__a_tool_with"), "{name}");
        // Pinned: the mapping must not change between builds or restarts.
        assert_eq!(name, exposed_name("github__", long));
        assert_eq!(
            name,
            "github__a_tool_with_a_name_that_goes_on_and_on_well_pas_a763c05f"
        );
        assert_ne!(name, exposed_name("github__", &format!("{long}2")));
        let multibyte = exposed_name("s__", &"é".repeat(40));
        assert!(multibyte.len() <= MAX_EXPOSED_NAME);
    }

    #[test]
    fn globs() {
        assert!(glob("*", ""));
        assert!(glob("get-*", "get-sum"));
        assert!(glob("*-sum", "get-sum"));
        assert!(glob("g?t-*m", "get-sum"));
        assert!(!glob("get-*", "put-sum"));
        assert!(glob("*a*b*", "xxaxxbxx"));
        assert!(!glob("*a*b", "xxaxxbxx"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
    }

    #[test]
    fn allow_then_deny() {
        let filter = ToolFilter {
            allow: vec!["get-*".into(), "echo".into()],
            deny: vec!["*-secret".into()],
        };
        assert!(filter.admits("get-sum"));
        assert!(filter.admits("echo"));
        assert!(!filter.admits("drop-table"));
        assert!(!filter.admits("get-secret"));
        assert!(ToolFilter::default().admits("anything"));
    }
}
