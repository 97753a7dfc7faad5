//! The table of per-session connections (see [`crate::isolated`]): by session and server,
//! each started once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::upstream::Running;
use crate::wire::lock;
use crate::Session;

/// A session (by the address of its `Arc`) and a server.
pub(crate) type Key = (usize, usize);

/// The per-session connections, each started once.
#[derive(Default)]
pub(crate) struct Instances(Mutex<HashMap<Key, Arc<OnceCell<Arc<Running>>>>>);

fn key(session: &Arc<Session>, index: usize) -> Key {
    (Arc::as_ptr(session) as usize, index)
}

impl Instances {
    /// The cell of `session`'s connection to server `index` (made empty when there is none):
    /// whoever finds it empty starts the connection, the others wait for it.
    pub(crate) fn cell(&self, session: &Arc<Session>, index: usize) -> Arc<OnceCell<Arc<Running>>> {
        lock(&self.0)
            .entry(key(session, index))
            .or_default()
            .clone()
    }

    /// The connections of `session` that are running, by server.
    pub(crate) fn of(&self, session: &Arc<Session>) -> Vec<(usize, Arc<Running>)> {
        let owner = Arc::as_ptr(session) as usize;
        lock(&self.0)
            .iter()
            .filter(|((s, _), _)| *s == owner)
            .filter_map(|((_, index), cell)| Some((*index, cell.get()?.clone())))
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
            .filter_map(|cell| cell.get().cloned())
            .collect()
    }

    /// Forgets the connection under `key` if it is still `running` (it closed).
    pub(crate) fn forget(&self, key: Key, running: &Arc<Running>) {
        let mut instances = lock(&self.0);
        let same = instances
            .get(&key)
            .and_then(|cell| cell.get())
            .is_some_and(|kept| Arc::ptr_eq(kept, running));
        if same {
            instances.remove(&key);
        }
    }
}
