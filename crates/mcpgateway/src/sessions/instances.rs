//! The table of per-session connections (see [`crate::sessions::isolated`]): by session and server,
//! each started once, and counted per client so that none starts more than its share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::sessions::session::Session;
use crate::upstream::Running;
use crate::wire::lock;

/// A session (by the address of its `Arc`) and a server.
pub(crate) type Key = (usize, usize);

/// The per-session connections, each started once, with the quota key of the client whose
/// session it serves.
#[derive(Default)]
pub(crate) struct Instances(Mutex<HashMap<Key, Entry>>);

type Cell = Arc<OnceCell<Arc<Running>>>;

struct Entry {
    cell: Cell,
    quota: String,
}

/// Why a new per-session connection may not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// The gateway runs its most.
    All(usize),
    /// This client's sessions run their most.
    Client(usize),
    /// The session ended.
    Ended,
}

fn key(session: &Arc<Session>, index: usize) -> Key {
    (Arc::as_ptr(session) as usize, index)
}

impl Instances {
    /// The cell of `session`'s connection to server `index` (made empty when there is none,
    /// within `most` in all and `per_client` for its client): whoever finds it empty starts the
    /// connection, the others wait for it.
    pub(crate) fn cell(
        &self,
        session: &Arc<Session>,
        index: usize,
        most: usize,
        per_client: usize,
    ) -> Result<Cell, Full> {
        let mut instances = lock(&self.0);
        // Read under the lock [`Instances::take`] takes a closed session's connections under:
        // one made before is taken, none is made after.
        if session.is_closed() {
            return Err(Full::Ended);
        }
        if let Some(entry) = instances.get(&key(session, index)) {
            return Ok(entry.cell.clone());
        }
        if instances.len() >= most {
            return Err(Full::All(most));
        }
        let quota = session.principal().quota_key();
        if instances.values().filter(|e| e.quota == quota).count() >= per_client {
            return Err(Full::Client(per_client));
        }
        let cell = Cell::default();
        instances.insert(
            key(session, index),
            Entry {
                cell: cell.clone(),
                quota: quota.to_owned(),
            },
        );
        Ok(cell)
    }

    /// The connections of `session` that are running, by server.
    pub(crate) fn of(&self, session: &Arc<Session>) -> Vec<(usize, Arc<Running>)> {
        let owner = Arc::as_ptr(session) as usize;
        lock(&self.0)
            .iter()
            .filter(|((s, _), _)| *s == owner)
            .filter_map(|((_, index), entry)| Some((*index, entry.cell.get()?.clone())))
            .collect()
    }

    /// Takes away (to be closed) every connection of `session`.
    pub(crate) fn take(&self, session: &Arc<Session>) -> Vec<Arc<Running>> {
        let owner = Arc::as_ptr(session) as usize;
        self.take_where(|(s, _)| *s == owner)
    }

    /// Takes away (to be closed) every session's connection to server `index`.
    pub(crate) fn take_server(&self, index: usize) -> Vec<Arc<Running>> {
        self.take_where(|(_, server)| *server == index)
    }

    fn take_where(&self, taken: impl Fn(&Key) -> bool) -> Vec<Arc<Running>> {
        let mut instances = lock(&self.0);
        let keys: Vec<Key> = instances.keys().filter(|k| taken(k)).copied().collect();
        keys.iter()
            .filter_map(|k| instances.remove(k))
            .filter_map(|entry| entry.cell.get().cloned())
            .collect()
    }

    /// Forgets `session`'s connection to server `index` if it never started (its start
    /// failed): it holds no place in the counts.
    pub(crate) fn forget_unstarted(&self, session: &Arc<Session>, index: usize) {
        let mut instances = lock(&self.0);
        let key = key(session, index);
        if instances.get(&key).is_some_and(|e| e.cell.get().is_none()) {
            instances.remove(&key);
        }
    }

    /// Forgets the connection under `key` if it is still `running` (it closed).
    pub(crate) fn forget(&self, key: Key, running: &Arc<Running>) {
        let mut instances = lock(&self.0);
        let same = instances
            .get(&key)
            .and_then(|entry| entry.cell.get())
            .is_some_and(|kept| Arc::ptr_eq(kept, running));
        if same {
            instances.remove(&key);
        }
    }
}
