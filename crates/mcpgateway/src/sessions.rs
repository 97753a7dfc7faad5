//! Sessions and who owns them: a client's session ([`session`]), the table of sessions and their
//! calls in flight ([`registry`]), the principal every piece of state is bound to
//! ([`principal`]), a server's questions routed to the session whose call asked ([`bridge`]),
//! and the per-session server connections ([`isolated`], [`instances`]).

pub(crate) mod bridge;
pub(crate) mod instances;
pub(crate) mod isolated;
pub(crate) mod principal;
pub(crate) mod registry;
pub(crate) mod session;
