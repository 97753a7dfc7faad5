//! The calls of the gateway's own search, describe and call tools, listed when some server's
//! tools are behind search (see `exposure.rs`; their definitions are `toolsearch`'s).
//!
//! - search ranks every tool of the catalog (listed directly or not) for a task in plain words;
//! - describe answers one tool's full definition as it would be listed, and adds it to the
//!   session's own list (told with `notifications/tools/list_changed` to that session only);
//! - call becomes the `tools/call` of the named tool with the given arguments, the rest of the
//!   request (`_meta`, its progress token) as it came: checked, forwarded and answered exactly
//!   as a direct call would be.
//!
//! Their own arguments are checked against their `inputSchema`s, violations answered as a
//! server tool's would be.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use mcpclient::{Frame, RawParams};
use serde_json::{json, Value};
use toolsearch::{CALL_TOOL, DEFAULT_LIMIT, DESCRIBE_TOOL, SEARCH_TOOL};

use crate::gateway::Hub;
use crate::options::Exposure;
use crate::policy::catalog::Catalog;
use crate::policy::exposure::{listing, Made, Searchable};
use crate::sessions::session::Session;
use crate::wire::{made as answer, Answer};

/// What a `tools/call` of one of the gateway's tools comes to.
pub(crate) enum Meta {
    /// Not one of them (or they are not listed): an ordinary call.
    NotOurs,
    /// Answered here.
    Answered(Answer),
    /// A call tool's call, now the `tools/call` of this exposed name (its params rewritten).
    Forward(String),
}

/// The input schemas of the search, describe and call tools, compiled once.
fn schemas() -> &'static HashMap<String, schemaval::Schema> {
    static SCHEMAS: OnceLock<HashMap<String, schemaval::Schema>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        toolsearch::search_mode_tools()
            .iter()
            .filter_map(|tool| {
                let name = tool.get("name")?.as_str()?.to_owned();
                let schema = schemaval::Schema::compile(tool.get("inputSchema")?).ok()?;
                Some((name, schema))
            })
            .collect()
    })
}

/// A tool result with `isError: true` saying `text`.
fn tool_error(text: String) -> Answer {
    answer(&json!({"content": [{"type": "text", "text": text}], "isError": true}))
}

impl Hub {
    /// Whether any server's tools may be behind search.
    fn exposure_configured(&self) -> bool {
        self.options.exposure.mode != Exposure::All
            || self
                .upstreams
                .iter()
                .any(|u| u.config.exposure.is_some_and(|m| m != Exposure::All))
    }

    /// The exposure plan of `catalog`.
    fn made(&self, catalog: &Arc<Catalog>) -> Arc<Made> {
        self.exposure.made(
            catalog,
            |i| self.upstreams.get(i).and_then(|u| u.config.exposure),
            &self.options.exposure,
        )
    }

    /// `session`'s `tools/list`: the catalog's tools, or, with servers behind search, the
    /// search tools, the directly listed tools and those the session described; in either
    /// case only those its principal may use.
    pub(crate) fn listed_tools(
        &self,
        session: &Arc<Session>,
        catalog: &Arc<Catalog>,
    ) -> Vec<Value> {
        let mut listed = if self.exposure_configured() {
            let made = self.made(catalog);
            let disclosed = self.exposure.disclosed(session);
            listing(&catalog.tools, &made.plan, &disclosed.names())
        } else {
            catalog.tools.clone()
        };
        let principal = session.principal();
        if principal.is_scoped() {
            listed.retain(|tool| {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                principal.may_use(name)
            });
        }
        listed
    }

    /// A `tools/call` of `exposed` with `params`: answered here when it is the search or
    /// describe tool, rewritten into the named tool's call when it is the call tool, while the
    /// gateway lists them.
    pub(crate) async fn gateway_tool(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: &str,
        exposed: &str,
        params: &mut RawParams,
    ) -> Meta {
        if ![SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL].contains(&exposed)
            || !self.exposure_configured()
        {
            return Meta::NotOurs;
        }
        self.settle().await;
        let catalog = self.catalog();
        let made = self.made(&catalog);
        if !made.plan.search {
            return Meta::NotOurs;
        }
        let arguments: Value = params
            .get("arguments")
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or_else(|| json!({}));
        if let Some(Err(error)) = schemas().get(exposed).map(|s| s.validate(&arguments)) {
            return Meta::Answered(self.rejected(exposed, error.lines(), error.hints()));
        }
        let name = arguments
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match exposed {
            SEARCH_TOOL => Meta::Answered(self.search_answer(session, &catalog, &made, &arguments)),
            DESCRIBE_TOOL => Meta::Answered(self.describe(session, id, &catalog, &made, name)),
            _ => {
                params.set("name", &json!(name));
                // The arguments' text as the client wrote it.
                let inner = params
                    .get("arguments")
                    .and_then(|a| RawParams::parse(a).ok())
                    .unwrap_or_default();
                match inner.get("arguments") {
                    Some(text) => params.set_raw("arguments", text.to_owned()),
                    None => {
                        params.remove("arguments");
                    }
                }
                Meta::Forward(name.to_owned())
            }
        }
    }

    /// The search tool for `session`: ranked among the tools its principal may use only.
    fn search_answer(
        &self,
        session: &Session,
        catalog: &Catalog,
        made: &Made,
        arguments: &Value,
    ) -> Answer {
        let query = arguments["query"].as_str().unwrap_or_default();
        let server = arguments.get("server").and_then(Value::as_str);
        if let Some(server) = server {
            if !self.upstreams.iter().any(|u| u.name() == server) {
                let names: Vec<&str> = self.upstreams.iter().map(|u| u.name()).collect();
                return tool_error(format!(
                    "unknown server '{server}'; the servers are: {}",
                    names.join(", ")
                ));
            }
        }
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .and_then(|l| usize::try_from(l).ok())
            .unwrap_or(DEFAULT_LIMIT);
        let principal = session.principal();
        let searchable = made.index_for(principal, || {
            Searchable::build(
                catalog,
                |i| self.upstream_name(i),
                |name| principal.may_use(name),
            )
        });
        answer(&searchable.search(query, server, limit))
    }

    /// The describe tool: `name`'s definition as listed; a tool not listed directly joins the
    /// session's list, and the session alone is told its list changed.
    fn describe(
        &self,
        session: &Arc<Session>,
        id: &str,
        catalog: &Catalog,
        made: &Made,
        name: &str,
    ) -> Answer {
        // A tool its principal may not use is described as one that does not exist.
        let found = catalog
            .tools
            .iter()
            .enumerate()
            .find(|(_, t)| t.get("name").and_then(Value::as_str) == Some(name))
            .filter(|_| session.principal().may_use(name));
        let Some((index, tool)) = found else {
            return tool_error(format!(
                "unknown tool '{name}': use {SEARCH_TOOL} to find a tool's name"
            ));
        };
        let text = serde_json::to_string_pretty(tool).unwrap_or_default();
        // A modern request's session lasts one request: it has no list of its own.
        if !made.plan.is_direct(index)
            && !session.is_modern()
            && self.exposure.disclose(session, name)
        {
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            session.send(Frame::from_value(&changed), Some(id));
        }
        answer(&json!({"content": [{"type": "text", "text": text}]}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::catalog::Route;

    #[test]
    fn the_gateway_tools_schemas_compile_under_the_gateway_policy() {
        assert_eq!(schemas().len(), 3);
        let search = &schemas()[SEARCH_TOOL];
        assert!(search
            .validate(&json!({"query": "open a pull request"}))
            .is_ok());
        let lines = search.validate(&json!({"limit": 0})).unwrap_err().lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(schemas()[CALL_TOOL]
            .validate(&json!({"arguments": {}}))
            .is_err());
    }

    #[test]
    fn search_names_hits_as_exposed_and_filters_by_server() {
        let tools = [
            (
                "gh__get_issue",
                0,
                "get_issue",
                "Get an issue of a repository.",
            ),
            ("fs__read_file", 1, "read_file", "Read a file from disk."),
        ];
        let mut catalog = Catalog::default();
        for (exposed, upstream, name, description) in tools {
            catalog
                .tools
                .push(json!({"name": exposed, "description": description,
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}));
            catalog.tool_routes.insert(
                exposed.to_owned(),
                Route {
                    upstream,
                    name: name.to_owned(),
                    unlisted: false,
                },
            );
        }
        let servers = ["github", "files"];
        let searchable = Searchable::build(&catalog, |i| servers[i], |_| true);
        let result = searchable.search("read the file", None, 5);
        assert_eq!(
            result["structuredContent"]["tools"][0]["name"],
            "fs__read_file"
        );
        assert_eq!(result["structuredContent"]["tools"][0]["server"], "files");
        assert_eq!(
            result["structuredContent"]["tools"][0]["arguments"],
            json!(["path"])
        );
        let only = searchable.search("read the file", Some("github"), 5);
        let names: Vec<&Value> = only["structuredContent"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["name"])
            .collect();
        assert!(names.iter().all(|n| *n == "gh__get_issue"), "{names:?}");
    }
}
