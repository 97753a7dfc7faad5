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

use crate::{path, CompileError, Dialect, MAX_REFS_FOR_CYCLE_SEARCH};

/// The base URI of a document without `$id`, the same one the underlying validator uses.
pub(crate) const DEFAULT_BASE: &str = "json-schema:///";

/// Keywords whose string value is a reference that must resolve inside the document.
const REFERENCE_KEYWORDS: [&str; 2] = ["$ref", "$dynamicRef"];

/// Keywords that make validation recurse as deep as the instance whatever the references do:
/// dynamic references (resolved by scope at validation time, which the walk cannot follow) and
/// `uniqueItems` (which compares whole items, recursively).
const DEEP_KEYWORDS: [&str; 3] = ["$dynamicRef", "$recursiveRef", "uniqueItems"];

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

/// What the walk learned about a schema whose references all resolve.
pub(crate) struct Shape {
    /// Whether validation can recurse as deep as the instance: some chain of references leads
    /// back into itself, or a [`DEEP_KEYWORDS`] keyword is used. Without that, validation
    /// recursion is bounded by the schema's own depth.
    pub(crate) recursive: bool,
}

/// One step from a subschema to one of its children: a key, then perhaps a key or an index
/// (`properties` → `name`, `allOf` → `2`).
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A walked subschema: its parent's index in the walk (none for the root) and the steps from it.
struct Node<'a> {
    parent: Option<usize>,
    steps: [Option<Step<'a>>; 2],
}

/// The walked subschemas. Readable paths are built only for error messages.
#[derive(Default)]
struct Walk<'a> {
    nodes: Vec<Node<'a>>,
}

impl<'a> Walk<'a> {
    fn path(&self, mut index: usize) -> String {
        let mut chain = Vec::new();
        loop {
            let node = &self.nodes[index];
            chain.extend(node.steps.iter().rev().flatten().copied());
            match node.parent {
                Some(parent) => index = parent,
                None => break,
            }
        }
        let mut out = String::from("$");
        for step in chain.iter().rev() {
            match step {
                Step::Key(key) => path::push_key(&mut out, key),
                Step::Index(i) => path::push_index(&mut out, *i),
            }
        }
        out
    }

    /// Indexes of `index` and all its ancestors.
    fn ancestry(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(index), |&i| self.nodes[i].parent)
    }
}

/// One reference: the walked subschema it stands in, and the address of what it resolves to.
struct Edge {
    from: usize,
    to: *const Value,
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
        .map_err(|err| invalid_uri("$".to_owned(), &err))?;
    let asked: Vec<String> = refuse.asked.lock().map(|a| a.clone()).unwrap_or_default();
    let base = referencing::uri::from_str(DEFAULT_BASE)
        .map_err(|err| invalid_uri("$".to_owned(), &err))?;
    let root = registry.resolver(base);

    let mut deep_keyword = false;
    let mut edges: Vec<Edge> = Vec::new();
    let mut walk = Walk::default();
    let mut walked: HashMap<*const Value, usize> = HashMap::new();
    let mut stack: Vec<(&Value, Resolver<'_>, Node<'_>, Draft)> = vec![(
        schema,
        root,
        Node {
            parent: None,
            steps: [None, None],
        },
        draft,
    )];
    while let Some((node, resolver, place, draft)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let here = walk.nodes.len();
        walk.nodes.push(place);
        walked.insert(node as *const Value, here);
        let draft = match draft.detect(node) {
            Draft::Unknown => draft,
            known => known,
        };
        let resolver = resolver
            .in_subresource(draft.create_resource_ref(node))
            .map_err(|err| invalid_uri(walk.path(here), &err))?;
        deep_keyword |= DEEP_KEYWORDS
            .iter()
            .any(|k| map.get(*k).is_some_and(|v| v != &Value::Bool(false)));
        for keyword in REFERENCE_KEYWORDS {
            let Some(Value::String(reference)) = map.get(keyword) else {
                continue;
            };
            let unresolved = || {
                let mut location = walk.path(here);
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
            edges.push(Edge {
                from: here,
                to: resolved.contents() as *const Value,
            });
        }
        let steps = child_steps(map);
        for child in draft.subresources_of(node) {
            let place = Node {
                parent: Some(here),
                steps: steps
                    .get(&(child as *const Value))
                    .copied()
                    .unwrap_or([None, None]),
            };
            stack.push((child, resolver.clone(), place, draft));
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
        recursive: deep_keyword || has_cycle(&edges, &walk, &walked),
    })
}

/// Whether following references can come back to where it started: reference `a` leads to
/// reference `b` when `b` stands inside (or at) the subschema `a` resolves to. A target outside
/// the walked subschemas (a metaschema, a keyword the dialect does not know) counts as a cycle.
fn has_cycle(edges: &[Edge], walk: &Walk<'_>, walked: &HashMap<*const Value, usize>) -> bool {
    if edges.len() > MAX_REFS_FOR_CYCLE_SEARCH {
        return true;
    }
    let mut by_target: HashMap<usize, Vec<usize>> = HashMap::new();
    for (e, edge) in edges.iter().enumerate() {
        match walked.get(&edge.to) {
            Some(&target) => by_target.entry(target).or_default().push(e),
            None => return true,
        }
    }
    // Reference `a` leads to `b` when `a`'s target is `b`'s subschema or one of its ancestors.
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); edges.len()];
    for (b, edge) in edges.iter().enumerate() {
        for ancestor in walk.ancestry(edge.from) {
            for &a in by_target.get(&ancestor).into_iter().flatten() {
                next[a].push(b);
            }
        }
    }
    // Depth-first search with three colours, iterative: 0 unseen, 1 on the path, 2 done.
    let mut colour = vec![0u8; edges.len()];
    for start in 0..edges.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut path = vec![(start, 0usize)];
        colour[start] = 1;
        while let Some((node, child)) = path.last_mut() {
            match next[*node].get(*child) {
                Some(&succ) => {
                    *child += 1;
                    match colour[succ] {
                        1 => return true,
                        0 => {
                            colour[succ] = 1;
                            path.push((succ, 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    colour[*node] = 2;
                    path.pop();
                }
            }
        }
    }
    false
}

/// The steps to everything one or two levels below a subschema, by address, to place the
/// subschemas the dialect's own walker hands back.
fn child_steps(
    map: &serde_json::Map<String, Value>,
) -> HashMap<*const Value, [Option<Step<'_>>; 2]> {
    let mut steps = HashMap::new();
    for (key, value) in map {
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    steps.insert(
                        item as *const Value,
                        [Some(Step::Key(key)), Some(Step::Index(i))],
                    );
                }
            }
            Value::Object(inner) => {
                for (k, v) in inner {
                    steps.insert(
                        v as *const Value,
                        [Some(Step::Key(key)), Some(Step::Key(k))],
                    );
                }
            }
            _ => {}
        }
        steps.insert(value as *const Value, [Some(Step::Key(key)), None]);
    }
    steps
}

fn invalid_uri(location: String, err: &referencing::Error) -> CompileError {
    CompileError::InvalidSchema {
        location,
        message: err.to_string(),
    }
}
