//! Who is asking: the principal that every piece of a client's state belongs to.
//!
//! A front works out the principal of each request once, at the door (the OAuth access token's
//! issuer and subject, the static token, or the client's address when there is no token), and
//! every session it opens carries it. From there it decides, with nothing looked up again:
//!
//! - **bindings**: a session, a parked call (its `requestState`) and a per-session server
//!   belong to the principal that started them; a request of another principal naming one is
//!   answered exactly as if it named nothing (unknown session, unknown `requestState`);
//! - **access**: which tools it may see and call under per-tool scopes (`toolScopes`), on every
//!   path that names a tool: `tools/list` in every exposure mode, the search, describe and call
//!   tools, and progressive disclosure;
//! - **quotas**: sessions, parked calls and per-session servers are counted per
//!   [`Principal::quota_key`]: the identity itself when it is a person or a client of an issuer,
//!   and the client's address where many clients share one identity (a static token) or have
//!   none.
//!
//! Identities are compared as whole keys built from the issuer and the subject (or client id),
//! so two issuers' subjects never meet. The key holds no secret: never the token itself.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use crate::front::bearer::{Grant, ToolScope};

/// The principal of a request.
#[derive(Clone)]
pub struct Principal {
    id: Arc<str>,
    quota: Arc<str>,
    access: Access,
}

/// The tools a principal may reach.
#[derive(Clone)]
enum Access {
    /// Every tool (no per-tool scope applies to it).
    Everything,
    /// The tools whose rules its scopes meet.
    Scoped {
        rules: Arc<[ToolScope]>,
        scopes: Arc<BTreeSet<String>>,
    },
}

impl Principal {
    /// The one client of the stdio front (whoever started mcpx).
    pub fn local() -> Principal {
        Principal::plain("local", "local")
    }

    /// A client without credentials (an HTTP front without a token, on loopback): known by its
    /// address.
    pub fn anonymous(address: IpAddr) -> Principal {
        let id: Arc<str> = Arc::from(format!("address {address}"));
        Principal {
            quota: id.clone(),
            id,
            access: Access::Everything,
        }
    }

    /// A client with the gateway's static bearer token: one principal for all who hold it,
    /// counted per address (the token is shared, the quota is not).
    pub fn static_token(address: IpAddr) -> Principal {
        Principal::plain("static token", &format!("static token from {address}"))
    }

    /// The holder of an OAuth access token `grant` from `issuer`: its subject, or for a token
    /// without one (client credentials) its client id; `rules` are the per-tool scopes.
    pub fn oauth(issuer: &str, grant: &Grant, rules: &Arc<[ToolScope]>) -> Principal {
        // A grant names one or the other: a token with neither is refused (see `bearer`).
        let who = match (&grant.subject, &grant.client_id) {
            (Some(subject), _) => format!("subject {subject}"),
            (None, Some(client)) => format!("client {client}"),
            (None, None) => "nobody".to_owned(),
        };
        let id = format!("{who} of {issuer}");
        let access = if rules.is_empty() {
            Access::Everything
        } else {
            Access::Scoped {
                rules: rules.clone(),
                scopes: Arc::new(grant.scopes.clone()),
            }
        };
        Principal {
            quota: Arc::from(id.as_str()),
            id: Arc::from(id),
            access,
        }
    }

    fn plain(id: &str, quota: &str) -> Principal {
        Principal {
            id: Arc::from(id),
            quota: Arc::from(quota),
            access: Access::Everything,
        }
    }

    /// Whether `other` is the same principal (what bindings compare).
    pub fn is(&self, other: &Principal) -> bool {
        self.id == other.id
    }

    /// What its quotas are counted against.
    pub fn quota_key(&self) -> &str {
        &self.quota
    }

    /// The scope it lacks to see and call the tool exposed as `tool`, if any: a tool needs the
    /// scope of every rule that matches it (this names the first one not held).
    pub fn missing_scope(&self, tool: &str) -> Option<&str> {
        match &self.access {
            Access::Everything => None,
            Access::Scoped { rules, scopes } => rules
                .iter()
                .find(|rule| {
                    crate::policy::naming::glob(&rule.tools, tool) && !scopes.contains(&rule.scope)
                })
                .map(|rule| rule.scope.as_str()),
        }
    }

    /// Whether it may see and call the tool exposed as `tool`.
    pub fn may_use(&self, tool: &str) -> bool {
        self.missing_scope(tool).is_none()
    }

    /// Whether some tool may be hidden from it (a per-tool scope it lacks).
    pub(crate) fn is_scoped(&self) -> bool {
        match &self.access {
            Access::Everything => false,
            Access::Scoped { rules, scopes } => rules.iter().any(|r| !scopes.contains(&r.scope)),
        }
    }

    /// Which of the rules its scopes meet, one flag per rule: principals with the same flags see
    /// the same tools (what a shared per-visibility search index is keyed by).
    pub(crate) fn visibility(&self) -> Vec<bool> {
        match &self.access {
            Access::Everything => Vec::new(),
            Access::Scoped { rules, scopes } => {
                rules.iter().map(|r| scopes.contains(&r.scope)).collect()
            }
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Principal").field(&self.id).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(subject: Option<&str>, client: Option<&str>, scopes: &[&str]) -> Grant {
        Grant {
            subject: subject.map(str::to_owned),
            client_id: client.map(str::to_owned),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn rules() -> Arc<[ToolScope]> {
        Arc::from(vec![ToolScope {
            tools: "demo__book-*".into(),
            scope: "files:write".into(),
        }])
    }

    #[test]
    fn identities_are_issuer_and_subject_or_client() {
        let alice = Principal::oauth("https://a", &grant(Some("alice"), None, &[]), &rules());
        let bob = Principal::oauth("https://a", &grant(Some("bob"), None, &[]), &rules());
        let alice_elsewhere =
            Principal::oauth("https://b", &grant(Some("alice"), None, &[]), &rules());
        let alice_again = Principal::oauth(
            "https://a",
            &grant(Some("alice"), Some("app"), &["x"]),
            &rules(),
        );
        assert!(alice.is(&alice_again));
        assert!(!alice.is(&bob));
        assert!(!alice.is(&alice_elsewhere));
        let client = Principal::oauth("https://a", &grant(None, Some("alice"), &[]), &rules());
        assert!(!client.is(&alice), "a client id is not a subject");
        assert_eq!(alice.quota_key(), alice.to_string());
    }

    #[test]
    fn a_static_token_is_one_principal_counted_per_address() {
        let one = Principal::static_token("127.0.0.1".parse().unwrap());
        let two = Principal::static_token("127.0.0.2".parse().unwrap());
        assert!(one.is(&two));
        assert_ne!(one.quota_key(), two.quota_key());
        let anonymous = Principal::anonymous("127.0.0.1".parse().unwrap());
        assert!(!anonymous.is(&one) && !anonymous.is(&Principal::local()));
    }

    #[test]
    fn scopes_hide_the_tools_of_rules_not_met() {
        let without = Principal::oauth("https://a", &grant(Some("b"), None, &[]), &rules());
        let with = Principal::oauth(
            "https://a",
            &grant(Some("a"), None, &["files:write"]),
            &rules(),
        );
        assert_eq!(
            without.missing_scope("demo__book-table"),
            Some("files:write")
        );
        assert!(without.may_use("demo__echo") && without.is_scoped());
        assert!(with.may_use("demo__book-table") && !with.is_scoped());
        assert_eq!(without.visibility(), [false]);
        assert_eq!(with.visibility(), [true]);
        assert!(Principal::local().may_use("demo__book-table"));
    }
}
