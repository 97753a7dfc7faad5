//! What the gateway decides about the servers' tools: the merged catalog ([`catalog`]), exposed
//! names and filters ([`naming`]), which tools are listed and which behind search
//! ([`exposure`], [`search_tools`]), and tool pinning ([`pinning`]). Pure rules over the
//! catalog and a session; they start nothing.

pub(crate) mod catalog;
pub(crate) mod exposure;
pub(crate) mod naming;
pub(crate) mod pinning;
pub(crate) mod search_tools;
