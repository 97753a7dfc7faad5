//! The `Bearer` (or `DPoP`, RFC 9449 §7.1) challenge of a `WWW-Authenticate` header (RFC 6750
//! §3, RFC 9728 §5.1).

/// What a server's `Bearer` challenge says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`: where its Protected Resource Metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
    /// The header has a `DPoP` challenge: the server takes DPoP-bound tokens (RFC 9449 §7.1).
    pub dpop: bool,
}

impl Challenge {
    /// The `Bearer` challenge in `header`, which may hold other challenges beside it; `None`
    /// when there is none.
    pub fn parse(header: &str) -> Option<Challenge> {
        let mut rest = header.trim_start();
        let mut in_bearer = false;
        let mut found = None::<Challenge>;
        let mut saw_dpop = false;
        while !rest.is_empty() {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let name_end = rest
                .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let name = &rest[..name_end];
            let after = rest[name_end..].trim_start();
            if name.is_empty() {
                break;
            }
            let Some(value_text) = after.strip_prefix('=').filter(|v| !v.starts_with('=')) else {
                // A scheme: the parameters that follow are its own.
                let dpop = name.eq_ignore_ascii_case("dpop");
                saw_dpop |= dpop;
                in_bearer = name.eq_ignore_ascii_case("bearer") || dpop;
                if in_bearer && found.is_none() {
                    found = Some(Challenge::default());
                }
                rest = after;
                continue;
            };
            let value_text = value_text.trim_start();
            let (value, next) = if let Some(quoted) = value_text.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            } else {
                let end = value_text.find(',').unwrap_or(value_text.len());
                (value_text[..end].trim().to_owned(), &value_text[end..])
            };
            if let (true, Some(challenge)) = (in_bearer, found.as_mut()) {
                match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => challenge.resource_metadata = Some(value),
                    "scope" => challenge.scope = Some(value),
                    "error" => challenge.error = Some(value),
                    _ => {}
                }
            }
            rest = next;
        }
        found.map(|c| Challenge {
            dpop: saw_dpop,
            ..c
        })
    }

    /// The challenged scopes, one by one.
    pub fn scopes(&self) -> Vec<String> {
        self.scope
            .as_deref()
            .unwrap_or_default()
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parameters() {
        let cases = [
            (
                r#"Bearer resource_metadata="http://a/.well-known/oauth-protected-resource/mcp""#,
                Some((
                    Some("http://a/.well-known/oauth-protected-resource/mcp"),
                    None,
                    None,
                )),
            ),
            (
                r#"Bearer scope="files:read files:write", resource_metadata="http://a/x", error="insufficient_scope""#,
                Some((
                    Some("http://a/x"),
                    Some("files:read files:write"),
                    Some("insufficient_scope"),
                )),
            ),
            (
                r#"Basic realm="x", Bearer error=invalid_token, scope="a""#,
                Some((None, Some("a"), Some("invalid_token"))),
            ),
            ("bearer", Some((None, None, None))),
            (r#"Basic realm="x""#, None),
            (r#"Bearer scope="a\"b"#, Some((None, Some("a\"b"), None))),
            ("", None),
        ];
        for (header, want) in cases {
            let got = Challenge::parse(header);
            let got = got.as_ref().map(|c| {
                (
                    c.resource_metadata.as_deref(),
                    c.scope.as_deref(),
                    c.error.as_deref(),
                )
            });
            assert_eq!(got, want, "{header}");
        }
    }
}
