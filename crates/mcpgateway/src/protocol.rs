//! The protocol eras and their conversations: what a 2026-07-28 request is to the gateway
//! ([`modern`], [`stateless`]), the multi round-trip that parks a call while its client answers
//! ([`mrtr`], [`conversation`], [`question`]), and `subscriptions/listen` ([`listen`]). Below
//! the fronts, above the sessions and the servers.

pub(crate) mod conversation;
pub(crate) mod listen;
pub(crate) mod modern;
pub(crate) mod mrtr;
pub(crate) mod question;
pub(crate) mod stateless;
