//! The gateway's servers, by number: a table that only grows, so that a server's number (what
//! routes, sessions, subscriptions and per-session connections hold) stays valid for the
//! gateway's whole life while config reloads add, remove and change servers.
//!
//! Nothing is renumbered or overwritten: an added server, and the new version of a changed one,
//! take the next numbers; a removed server, and the old version of a changed one, stay in the
//! table retired. A retired server is left out of [`Roster::iter`] (so out of the catalog, of
//! settling, of shutdown and of every lookup by name) and is never started again, and whatever
//! still holds its number reads a server that says it left the config, never another server.
//! The cost is one small entry (its config and state) per retired server, kept for the
//! gateway's life; reloads are rare and made by hand.

use std::ops::Index;
use std::sync::Arc;

use crate::options::UpstreamConfig;
use crate::upstream::Upstream;

/// Every server the gateway has had, by number (an [`Upstream`]'s `index`).
pub(crate) struct Roster(boxcar::Vec<Arc<Upstream>>);

impl Roster {
    /// The servers of the config the gateway starts with, numbered in its order.
    pub(crate) fn new(configs: Vec<UpstreamConfig>) -> Roster {
        let roster = Roster(boxcar::Vec::new());
        for config in configs {
            roster.add(config);
        }
        roster
    }

    /// Takes in a server under the next number.
    pub(crate) fn add(&self, config: UpstreamConfig) -> Arc<Upstream> {
        let index = self
            .0
            .push_with(|index| Arc::new(Upstream::new(index, config)));
        self.0[index].clone()
    }

    /// Server `index`, retired or not.
    pub(crate) fn get(&self, index: usize) -> Option<&Arc<Upstream>> {
        self.0.get(index)
    }

    /// The servers in service (not retired), in number order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Upstream>> {
        self.0.iter().map(|(_, u)| u).filter(|u| !u.is_retired())
    }

    /// The server in service called `name`.
    pub(crate) fn named(&self, name: &str) -> Option<&Arc<Upstream>> {
        self.iter().find(|u| u.name() == name)
    }
}

impl Index<usize> for Roster {
    type Output = Arc<Upstream>;

    fn index(&self, index: usize) -> &Arc<Upstream> {
        &self.0[index]
    }
}
