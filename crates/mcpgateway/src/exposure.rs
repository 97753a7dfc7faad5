//! Which tools a session's `tools/list` shows (issue 21): every server's tools (`all`, the
//! default), or, for servers set to `search`, three gateway tools instead (search, describe,
//! call, defined in `toolsearch`) through which all of their tools stay reachable; `auto` is
//! `search` once the gateway's whole tool list is past [`AUTO_MAX_TOOLS`] tools or
//! [`AUTO_MAX_LIST_BYTES`] bytes, and `all` below.
//!
//! Two things stay listed whatever the mode: the tools matching an `alwaysExpose` glob, and,
//! per session, the tools that session has described (progressive disclosure, at most
//! [`MAX_DISCLOSED`], the least recently described leaving first). A change of a session's own
//! list is told to that session only.
//!
//! The functions here are pure: the plan of a catalog and a session's disclosures in, the list
//! out. `search_tools.rs` answers the three tools' calls.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use serde_json::{json, Value};
use toolsearch::{Index, Options};

use crate::catalog::Catalog;
use crate::naming::glob;
use crate::wire::lock;
use crate::{Principal, Session};

/// `auto` lists the search tools instead when the gateway's tools are more than this many.
/// About the size past which clients start deferring tools themselves (Claude Code defers MCP
/// tools past about 10% of the context); at ~1.5 KB a tool on the real-tools fixture, 40 tools
/// are ~60 KB, ~15k tokens.
pub const AUTO_MAX_TOOLS: usize = 40;

/// `auto` lists the search tools instead when the gateway's `tools/list` (compact JSON) is over
/// this many bytes, about 16k tokens, whatever the count: a few tools with huge schemas cost as
/// much as many small ones.
pub const AUTO_MAX_LIST_BYTES: usize = 64 * 1024;

/// Most tools a session's described tools add to its list; past it the least recently
/// described one leaves the list (it stays reachable through search and call).
pub const MAX_DISCLOSED: usize = 32;

/// How a server's tools are offered (`"exposure"`, in the gateway section and per server).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Exposure {
    /// Listed directly, each under its exposed name.
    #[default]
    All,
    /// Behind the gateway's search, describe and call tools (and `alwaysExpose`).
    Search,
    /// `search` when the gateway's whole tool list is past [`AUTO_MAX_TOOLS`] or
    /// [`AUTO_MAX_LIST_BYTES`], else `all`.
    Auto,
}

/// The gateway-wide exposure policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExposureOptions {
    /// The mode of every server whose config names none.
    pub mode: Exposure,
    /// Globs (`*`, `?`) over exposed names (`SERVER__TOOL`) of tools always listed directly
    /// (`alwaysExpose`).
    pub always: Vec<String>,
}

/// Whether `auto` means `search` for a tool list of `tools` tools and `bytes` bytes.
pub(crate) fn auto_searches(tools: usize, bytes: usize) -> bool {
    tools > AUTO_MAX_TOOLS || bytes > AUTO_MAX_LIST_BYTES
}

/// Which of a catalog's tools are listed directly, and whether the search tools are.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// One per catalog tool, in its order.
    pub(crate) direct: Vec<bool>,
    /// Some tool is not listed directly: the search, describe and call tools are.
    pub(crate) search: bool,
}

impl Plan {
    /// The plan for tools named `names` (exposed names, in catalog order), each with its
    /// server's configured mode (`None`: the global one), the whole list being `bytes` long.
    pub(crate) fn make(
        names: &[&str],
        modes: &[Option<Exposure>],
        bytes: usize,
        options: &ExposureOptions,
    ) -> Plan {
        let auto = if auto_searches(names.len(), bytes) {
            Exposure::Search
        } else {
            Exposure::All
        };
        let direct: Vec<bool> = names
            .iter()
            .zip(modes)
            .map(|(name, mode)| {
                let mode = match mode.unwrap_or(options.mode) {
                    Exposure::Auto => auto,
                    other => other,
                };
                mode == Exposure::All || options.always.iter().any(|p| glob(p, name))
            })
            .collect();
        let search = direct.iter().any(|d| !d);
        Plan { direct, search }
    }

    /// Whether tool `index` of the catalog is listed directly.
    pub(crate) fn is_direct(&self, index: usize) -> bool {
        self.direct.get(index).copied().unwrap_or(true)
    }
}

/// The tools one session described, most recent last, at most [`MAX_DISCLOSED`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Disclosed {
    names: VecDeque<String>,
}

impl Disclosed {
    /// Adds `name` (or makes it the most recent); whether the set changed.
    pub(crate) fn disclose(&mut self, name: &str) -> bool {
        if let Some(at) = self.names.iter().position(|n| n == name) {
            if let Some(kept) = self.names.remove(at) {
                self.names.push_back(kept);
            }
            return false;
        }
        self.names.push_back(name.to_owned());
        while self.names.len() > MAX_DISCLOSED {
            self.names.pop_front();
        }
        true
    }

    /// The disclosed names.
    pub(crate) fn names(&self) -> HashSet<&str> {
        self.names.iter().map(String::as_str).collect()
    }
}

/// A session's `tools/list`: the search tools (when the plan has them) first, then the
/// catalog's tools that are listed directly or `disclosed`, in catalog order.
pub(crate) fn listing(tools: &[Value], plan: &Plan, disclosed: &HashSet<&str>) -> Vec<Value> {
    let mut listed = Vec::new();
    if plan.search {
        listed.extend(toolsearch::search_mode_tools());
    }
    for (i, tool) in tools.iter().enumerate() {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        if plan.is_direct(i) || disclosed.contains(name) {
            listed.push(tool.clone());
        }
    }
    listed
}

/// What exposure works out for one catalog, made when first needed.
pub(crate) struct Made {
    catalog: Weak<Catalog>,
    pub(crate) plan: Plan,
    /// The search indexes over the catalog's tools, one per visibility (which per-tool scope
    /// rules the caller meets: [`Principal::visibility`]), each built on the first search of a
    /// caller who sees that much and holding only the tools such a caller may use. No caller's
    /// search ranks, counts or returns a tool it may not use.
    indexes: Mutex<Vec<(Vec<bool>, Arc<Searchable>)>>,
}

/// Search indexes kept per catalog, one per visibility (see `Made`); past it the least
/// recently built is dropped, and built again when asked for. Visibilities are the
/// combinations of per-tool scopes callers hold: a handful in practice.
pub const MAX_SEARCH_INDEXES: usize = 16;

impl Made {
    /// The search index of what `principal` may use, `build` making it when there is none.
    pub(crate) fn index_for(
        &self,
        principal: &Principal,
        build: impl FnOnce() -> Searchable,
    ) -> Arc<Searchable> {
        let visibility = principal.visibility();
        if let Some((_, index)) = lock(&self.indexes).iter().find(|(v, _)| *v == visibility) {
            return index.clone();
        }
        // Built outside the lock: a large catalog takes a while, and other visibilities wait
        // for nothing. Two first searches of one visibility may both build; one is kept.
        let built = Arc::new(build());
        let mut indexes = lock(&self.indexes);
        if let Some((_, index)) = indexes.iter().find(|(v, _)| *v == visibility) {
            return index.clone();
        }
        if indexes.len() >= MAX_SEARCH_INDEXES {
            indexes.remove(0);
        }
        indexes.push((visibility, built.clone()));
        built
    }
}

/// The gateway's exposure state: the plan of the current catalog, and each session's
/// disclosures.
#[derive(Default)]
pub(crate) struct State {
    made: Mutex<Option<Arc<Made>>>,
    sessions: Mutex<Vec<(Weak<Session>, Disclosed)>>,
}

impl State {
    /// The plan (and index) of `catalog`, made again only when the catalog changed.
    pub(crate) fn made(
        &self,
        catalog: &Arc<Catalog>,
        mode_of: impl Fn(usize) -> Option<Exposure>,
        options: &ExposureOptions,
    ) -> Arc<Made> {
        let mut made = lock(&self.made);
        if let Some(current) = made.as_ref() {
            if current.catalog.as_ptr() == Arc::as_ptr(catalog) {
                return current.clone();
            }
        }
        let names: Vec<&str> = catalog
            .tools
            .iter()
            .map(|t| t.get("name").and_then(Value::as_str).unwrap_or_default())
            .collect();
        let modes: Vec<Option<Exposure>> = names
            .iter()
            .map(|n| {
                catalog
                    .tool_routes
                    .get(*n)
                    .and_then(|r| mode_of(r.upstream))
            })
            .collect();
        // Counted only when a mode needs it: the list may be large.
        let bytes = if modes
            .iter()
            .any(|m| m.unwrap_or(options.mode) == Exposure::Auto)
        {
            serde_json::to_vec(&catalog.tools).map_or(0, |b| b.len())
        } else {
            0
        };
        let new = Arc::new(Made {
            catalog: Arc::downgrade(catalog),
            plan: Plan::make(&names, &modes, bytes, options),
            indexes: Mutex::default(),
        });
        *made = Some(new.clone());
        new
    }

    /// The names `session` has disclosed.
    pub(crate) fn disclosed(&self, session: &Arc<Session>) -> Disclosed {
        lock(&self.sessions)
            .iter()
            .find(|(s, _)| s.as_ptr() == Arc::as_ptr(session))
            .map(|(_, d)| d.clone())
            .unwrap_or_default()
    }

    /// Discloses `name` to `session`; whether its list changed. Ended sessions are forgotten.
    pub(crate) fn disclose(&self, session: &Arc<Session>, name: &str) -> bool {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|(s, _)| s.strong_count() > 0);
        if let Some((_, disclosed)) = sessions
            .iter_mut()
            .find(|(s, _)| s.as_ptr() == Arc::as_ptr(session))
        {
            return disclosed.disclose(name);
        }
        let mut disclosed = Disclosed::default();
        disclosed.disclose(name);
        sessions.push((Arc::downgrade(session), disclosed));
        true
    }
}

/// The search index of one catalog, with the exposed name of each indexed tool.
pub(crate) struct Searchable {
    index: Index,
    /// (server name, the tool's name on it) → its exposed name.
    exposed: HashMap<(String, String), String>,
}

impl Searchable {
    /// Indexes the catalog's tools that `visible` admits (by exposed name) under their
    /// servers' names and their own names (the ranking splits names, and the prefix would only
    /// repeat the server); `server_name` names server `index`.
    pub(crate) fn build<'a>(
        catalog: &Catalog,
        server_name: impl Fn(usize) -> &'a str,
        visible: impl Fn(&str) -> bool,
    ) -> Self {
        let mut exposed = HashMap::new();
        let mut documents: Vec<(&str, Value)> = Vec::new();
        for tool in &catalog.tools {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let Some(route) = catalog.tool_routes.get(name) else {
                continue;
            };
            if !visible(name) {
                continue;
            }
            let server = server_name(route.upstream);
            let mut own = tool.clone();
            own["name"] = json!(route.name);
            exposed.insert((server.to_owned(), route.name.clone()), name.to_owned());
            documents.push((server, own));
        }
        let index = Index::build(documents.iter().map(|(s, t)| (*s, t)), &Options::default());
        Searchable { index, exposed }
    }

    /// The search tool's result for `query`, at most `limit` hits, only `server`'s when given.
    pub(crate) fn search(&self, query: &str, server: Option<&str>, limit: usize) -> Value {
        let hits = self.index.search(query, server, limit);
        toolsearch::search_result(&hits, |hit| {
            self.exposed
                .get(&(hit.server.clone(), hit.name.clone()))
                .cloned()
                .unwrap_or_else(|| hit.name.clone())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(mode: Exposure, always: &[&str]) -> ExposureOptions {
        ExposureOptions {
            mode,
            always: always.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn auto_switches_past_either_bound() {
        assert!(!auto_searches(AUTO_MAX_TOOLS, AUTO_MAX_LIST_BYTES));
        assert!(auto_searches(AUTO_MAX_TOOLS + 1, 0));
        assert!(auto_searches(1, AUTO_MAX_LIST_BYTES + 1));
    }

    #[test]
    fn modes_per_server_over_the_global_one_and_always_exposed_globs() {
        let names = ["a__x", "a__y", "b__x", "c__x"];
        let modes = [None, None, Some(Exposure::All), Some(Exposure::Search)];
        let all = Plan::make(&names, &modes, 0, &options(Exposure::All, &[]));
        assert_eq!(all.direct, [true, true, true, false]);
        assert!(all.search);
        let search = Plan::make(
            &names,
            &modes,
            0,
            &options(Exposure::Search, &["a__y", "c__*"]),
        );
        assert_eq!(search.direct, [false, true, true, true]);
        assert!(search.search);
        let nothing_hidden = Plan::make(&names[..3], &modes[..3], 0, &options(Exposure::All, &[]));
        assert!(!nothing_hidden.search);
    }

    #[test]
    fn auto_follows_the_size_of_the_whole_list() {
        let names: Vec<String> = (0..=AUTO_MAX_TOOLS).map(|i| format!("s__t{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let modes = vec![None; names.len()];
        let auto = options(Exposure::Auto, &[]);
        let many = Plan::make(&names, &modes, 0, &auto);
        assert!(many.search && many.direct.iter().all(|d| !d));
        let few = Plan::make(&names[..AUTO_MAX_TOOLS], &modes[..AUTO_MAX_TOOLS], 0, &auto);
        assert!(!few.search && few.direct.iter().all(|d| *d));
        let heavy = Plan::make(&names[..2], &modes[..2], AUTO_MAX_LIST_BYTES + 1, &auto);
        assert!(heavy.search);
    }

    #[test]
    fn disclosures_are_bounded_least_recent_first() {
        let mut disclosed = Disclosed::default();
        assert!(disclosed.disclose("t0"));
        assert!(!disclosed.disclose("t0"));
        for i in 1..MAX_DISCLOSED {
            assert!(disclosed.disclose(&format!("t{i}")));
        }
        // t0 described again: the most recent now, so t1 is the one that leaves.
        assert!(!disclosed.disclose("t0"));
        assert!(disclosed.disclose("new"));
        let names = disclosed.names();
        assert_eq!(names.len(), MAX_DISCLOSED);
        assert!(names.contains("t0") && names.contains("new") && !names.contains("t1"));
    }

    struct Nowhere;

    impl crate::Outbox for Nowhere {
        fn send(&self, _: mcpclient::Frame, _: Option<&str>) {}
        fn finish(&self, _: &str, _: Option<mcpclient::Frame>) {}
    }

    #[test]
    fn disclosures_are_per_session_and_forgotten_with_it() {
        let state = State::default();
        let one = Arc::new(Session::new(Box::new(Nowhere), crate::Principal::local()));
        let other = Arc::new(Session::new(Box::new(Nowhere), crate::Principal::local()));
        assert!(state.disclose(&one, "a__x"));
        assert!(!state.disclose(&one, "a__x"));
        assert!(state.disclose(&other, "a__y"));
        assert_eq!(state.disclosed(&one).names(), HashSet::from(["a__x"]));
        assert_eq!(state.disclosed(&other).names(), HashSet::from(["a__y"]));
        drop(one);
        assert!(state.disclose(&other, "a__z"));
        assert_eq!(lock(&state.sessions).len(), 1);
    }

    #[test]
    fn a_plan_is_made_once_per_catalog() {
        let state = State::default();
        let search = options(Exposure::Search, &[]);
        let with_tools = |names: &[&str]| {
            let mut catalog = Catalog::default();
            catalog.tools = names.iter().map(|n| json!({ "name": n })).collect();
            Arc::new(catalog)
        };
        let catalog = with_tools(&["a__x"]);
        let first = state.made(&catalog, |_| None, &search);
        assert_eq!(first.plan.direct, [false]);
        assert!(Arc::ptr_eq(
            &first,
            &state.made(&catalog, |_| None, &search)
        ));
        let next = with_tools(&["a__x", "a__y"]);
        assert_eq!(
            state.made(&next, |_| None, &search).plan.direct,
            [false, false]
        );
    }

    #[test]
    fn a_listing_has_the_search_tools_then_the_direct_and_disclosed_tools() {
        let tools = vec![
            json!({"name": "a__x"}),
            json!({"name": "b__y"}),
            json!({"name": "b__z"}),
        ];
        let plan = Plan {
            direct: vec![true, false, false],
            search: true,
        };
        let disclosed = HashSet::from(["b__z"]);
        let names: Vec<Value> = listing(&tools, &plan, &disclosed)
            .into_iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(
            names,
            [
                toolsearch::SEARCH_TOOL,
                toolsearch::DESCRIBE_TOOL,
                toolsearch::CALL_TOOL,
                "a__x",
                "b__z"
            ]
        );
        let all = Plan {
            direct: vec![true; 3],
            search: false,
        };
        assert_eq!(listing(&tools, &all, &HashSet::new()), tools);
    }
}
