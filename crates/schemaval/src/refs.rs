//! The reference policy: a schema may reference only itself (and the metaschemas of the
//! supported dialects, from built-in copies).
//!
//! The underlying validator resolves references lazily and only where they are used, so a broken
//! `$ref` inside an unused `$defs` entry would go unnoticed until a server's schema changed
//! shape. This walk checks every reference in every subschema up front, with the validator's own
//! resolution rules (base URIs from `$id`, anchors, JSON pointers), and names where it stands.

use std::collections::HashMap;
use std::sync::Mutex;

use std::sync::Arc;

use referencing::{Draft, Resolver, Retrieve, Uri, SPECIFICATIONS};
use serde_json::Value;

use crate::{path, CompileError, Dialect};

/// The base URI of a document without `$id`, the same one the underlying validator uses.
pub(crate) const DEFAULT_BASE: &str = "json-schema:///";

/// Keywords whose string value is a reference that must resolve inside the document.
const REFERENCE_KEYWORDS: [&str; 2] = ["$ref", "$dynamicRef"];

/// Keywords that make validation recurse on the instance's own depth rather than the schema's:
/// references (which may cycle) and `uniqueItems` (which compares whole items).
const INSTANCE_DEPTH_KEYWORDS: [&str; 4] = ["$ref", "$dynamicRef", "$recursiveRef", "uniqueItems"];

/// A retriever that fetches nothing. It writes down what it was asked for and hands back an empty
/// placeholder, so the registry can be built and each reference then traced to where it leads:
/// a reference that lands in a placeholder points outside the document.
#[derive(Default)]
pub(crate) struct Refuse {
    asked: Mutex<Vec<String>>,
}

impl Retrieve for Refuse {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(uri.as_str().to_owned());
        }
        Ok(Value::Object(serde_json::Map::new()))
    }
}

/// What the walk learned about a schema that compiled references cleanly.
pub(crate) struct Shape {
    /// Whether validation can recurse as deep as the instance (see [`INSTANCE_DEPTH_KEYWORDS`]).
    pub(crate) follows_instance_depth: bool,
}

/// Checks every reference in `schema` against the policy.
pub(crate) fn check(schema: &Value, dialect: Dialect) -> Result<Shape, CompileError> {
    let draft = dialect.draft();
    let refuse = Arc::new(Refuse::default());
    let registry = SPECIFICATIONS
        .add(DEFAULT_BASE, draft.create_resource_ref(schema))
        .and_then(|builder| {
            builder
                .retriever(refuse.clone() as Arc<dyn Retrieve>)
                .prepare()
        })
        .map_err(|err| invalid_uri("$", &err))?;
    let asked: Vec<String> = refuse.asked.lock().map(|a| a.clone()).unwrap_or_default();
    let root = registry
        .resolver(referencing::uri::from_str(DEFAULT_BASE).map_err(|err| invalid_uri("$", &err))?);

    let mut follows_instance_depth = false;
    let mut stack: Vec<(&Value, Resolver<'_>, String, Draft)> =
        vec![(schema, root, "$".to_owned(), draft)];
    while let Some((node, resolver, at, draft)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let draft = match draft.detect(node) {
            Draft::Unknown => draft,
            known => known,
        };
        let resolver = resolver
            .in_subresource(draft.create_resource_ref(node))
            .map_err(|err| invalid_uri(&at, &err))?;
        for keyword in INSTANCE_DEPTH_KEYWORDS {
            follows_instance_depth |= map.contains_key(keyword);
        }
        for keyword in REFERENCE_KEYWORDS {
            let Some(Value::String(reference)) = map.get(keyword) else {
                continue;
            };
            let unresolved = || {
                let mut location = at.clone();
                path::push_key(&mut location, keyword);
                CompileError::UnresolvedRef {
                    reference: reference.clone(),
                    location,
                }
            };
            let resolved = resolver.lookup(reference).map_err(|_| unresolved())?;
            let landed = resolved.resolver().base_uri();
            let landed = landed.as_str().split('#').next().unwrap_or_default();
            if asked.iter().any(|a| a.split('#').next() == Some(landed)) {
                return Err(unresolved());
            }
        }
        let places = child_places(node, &at);
        for child in draft.subresources_of(node) {
            let child_at = places
                .get(&(child as *const Value))
                .cloned()
                .unwrap_or_else(|| at.clone());
            stack.push((child, resolver.clone(), child_at, draft));
        }
    }
    if let Some(uri) = asked.first() {
        // The registry was asked for a document no walked reference leads to (one standing
        // under a keyword the dialect does not know): still outside, still refused.
        return Err(CompileError::UnresolvedRef {
            reference: uri.clone(),
            location: "$".to_owned(),
        });
    }
    Ok(Shape {
        follows_instance_depth,
    })
}

/// Paths of everything one or two levels below `node`, by address, to name the subschemas the
/// dialect's own walker hands back.
fn child_places(node: &Value, at: &str) -> HashMap<*const Value, String> {
    let mut places = HashMap::new();
    let Value::Object(map) = node else {
        return places;
    };
    for (key, value) in map {
        let mut here = at.to_owned();
        path::push_key(&mut here, key);
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mut p = here.clone();
                    path::push_index(&mut p, i);
                    places.insert(item as *const Value, p);
                }
            }
            Value::Object(inner) => {
                for (k, v) in inner {
                    let mut p = here.clone();
                    path::push_key(&mut p, k);
                    places.insert(v as *const Value, p);
                }
            }
            _ => {}
        }
        places.insert(value as *const Value, here);
    }
    places
}

fn invalid_uri(at: &str, err: &referencing::Error) -> CompileError {
    CompileError::InvalidSchema {
        location: at.to_owned(),
        message: err.to_string(),
    }
}
