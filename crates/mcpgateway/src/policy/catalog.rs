//! What the gateway offers, built from what its running servers list: tools and prompts under
//! exposed names, resources under their own URIs, each with the route back to its server.
//! Built anew whenever a server starts, stops or changes a list.

use std::collections::HashMap;

use serde_json::Value;

use crate::options::DownstreamDialect;
use crate::policy::naming::exposed_name;
use crate::policy::pinning::Pins;
use crate::upstream::roster::Roster;
use crate::upstream::Upstream;

/// Where an exposed tool or prompt lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) upstream: usize,
    /// Its name on that server.
    pub(crate) name: String,
    /// The server did not list it (see the gateway's unlisted routes): there is no schema to
    /// check its arguments against.
    pub(crate) unlisted: bool,
}

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Value>,
    pub(crate) tool_routes: HashMap<String, Route>,
    pub(crate) prompts: Vec<Value>,
    pub(crate) prompt_routes: HashMap<String, Route>,
    pub(crate) resources: Vec<Value>,
    resource_routes: HashMap<String, usize>,
    pub(crate) templates: Vec<Value>,
    /// The literal start of each template (up to its first `{`), and its server.
    template_routes: Vec<(String, usize)>,
}

/// Which lists differ between two catalogs, as the notification that says so.
pub(crate) fn changes(old: &Catalog, new: &Catalog) -> Vec<&'static str> {
    let mut changed = Vec::new();
    if old.tools != new.tools {
        changed.push("notifications/tools/list_changed");
    }
    if old.prompts != new.prompts {
        changed.push("notifications/prompts/list_changed");
    }
    if old.resources != new.resources || old.templates != new.templates {
        changed.push("notifications/resources/list_changed");
    }
    changed
}

impl Catalog {
    /// The catalog of the running servers in service, tool schemas presented in `dialect`.
    /// Tools that changed since pinned are withheld as `pins` says.
    pub(crate) fn build(upstreams: &Roster, dialect: DownstreamDialect, pins: &Pins) -> Catalog {
        let mut catalog = Catalog::default();
        for upstream in upstreams.iter() {
            let Some(running) = upstream.running() else {
                continue;
            };
            let tools = running.client.tools();
            let withheld = pins.withheld(&upstream.config, tools.iter().map(|t| t.raw()));
            for tool in tools.iter() {
                if upstream.config.tools.admits(tool.name()) && !withheld.contains(tool.name()) {
                    let raw = match dialect {
                        DownstreamDialect::Original => tool.raw().clone(),
                        DownstreamDialect::Draft202012 => tool.upgraded().tool.clone(),
                    };
                    catalog.add_named(raw, upstreams, upstream, Kind::Tool);
                }
            }
            let lists = running
                .lists
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            for prompt in lists.prompts {
                catalog.add_named(prompt, upstreams, upstream, Kind::Prompt);
            }
            for resource in lists.resources {
                if let Some(uri) = resource.get("uri").and_then(Value::as_str) {
                    catalog
                        .resource_routes
                        .entry(uri.to_owned())
                        .or_insert(upstream.index);
                }
                catalog.resources.push(resource);
            }
            for template in lists.templates {
                if let Some(uri) = template.get("uriTemplate").and_then(Value::as_str) {
                    let literal = uri.split('{').next().unwrap_or_default().to_owned();
                    catalog.template_routes.push((literal, upstream.index));
                }
                catalog.templates.push(template);
            }
        }
        catalog
    }

    /// Adds a tool or prompt of `upstream` under its exposed name. Two that map to one name (two
    /// servers with the same prefix, an empty one say) are a configuration error: the first
    /// listed keeps the name, and the log names both servers.
    fn add_named(&mut self, mut raw: Value, upstreams: &Roster, upstream: &Upstream, kind: Kind) {
        let Some(name) = raw.get("name").and_then(Value::as_str).map(str::to_owned) else {
            return;
        };
        let exposed = exposed_name(&upstream.config.prefix, &name);
        let (list, routes) = match kind {
            Kind::Tool => (&mut self.tools, &mut self.tool_routes),
            Kind::Prompt => (&mut self.prompts, &mut self.prompt_routes),
        };
        if let Some(first) = routes.get(&exposed) {
            let first_server = upstreams.get(first.upstream).map_or("?", |u| u.name());
            tracing::error!(
                exposed,
                first = format!("{first_server}: {}", first.name),
                second = format!("{}: {name}", upstream.name()),
                "two servers' names map to one exposed name; the second is not exposed (give one of them another \"prefix\")"
            );
            return;
        }
        raw["name"] = Value::String(exposed.clone());
        list.push(raw);
        routes.insert(
            exposed,
            Route {
                upstream: upstream.index,
                name,
                unlisted: false,
            },
        );
    }

    /// The server of a resource URI: the one that listed it, else the one whose template's
    /// literal start is the longest match.
    pub(crate) fn resource_server(&self, uri: &str) -> Option<usize> {
        if let Some(&upstream) = self.resource_routes.get(uri) {
            return Some(upstream);
        }
        self.template_routes
            .iter()
            .filter(|(literal, _)| !literal.is_empty() && uri.starts_with(literal.as_str()))
            .max_by_key(|(literal, _)| literal.len())
            .map(|&(_, upstream)| upstream)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Tool,
    Prompt,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_route_by_uri_then_by_the_longest_template() {
        let catalog = Catalog {
            resource_routes: HashMap::from([("file:///a/listed".to_owned(), 0)]),
            template_routes: vec![
                ("file:///".to_owned(), 1),
                ("file:///a/".to_owned(), 2),
                (String::new(), 3),
            ],
            ..Catalog::default()
        };
        assert_eq!(catalog.resource_server("file:///a/listed"), Some(0));
        assert_eq!(catalog.resource_server("file:///a/other"), Some(2));
        assert_eq!(catalog.resource_server("file:///b"), Some(1));
        // A template that is all variable (`{uri}`) routes nothing: it would catch everything.
        assert_eq!(catalog.resource_server("https://x"), None);
    }

    #[test]
    fn changes_name_the_lists_that_differ() {
        let old = Catalog::default();
        let new = Catalog {
            tools: vec![serde_json::json!({"name": "a__b"})],
            ..Catalog::default()
        };
        assert_eq!(changes(&old, &new), ["notifications/tools/list_changed"]);
        assert!(changes(
            &new,
            &Catalog {
                tools: new.tools.clone(),
                ..Catalog::default()
            }
        )
        .is_empty());
    }
}
