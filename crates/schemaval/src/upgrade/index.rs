//! Indexing a document for the upgrade: its resources and references, each JSON-pointer
//! reference rewritten to follow the renamed keywords.

use referencing::Uri;
use serde_json::{Map, Value};

use super::{legacy, pointer, root_uri, Index, Path, RefSite, Shape, Upgrade};
use crate::{NotUpgradable, MAX_UPGRADE_PASSES};

impl Upgrade {
    fn base_of(
        &self,
        obj: &Map<String, Value>,
        base: &Uri<String>,
        path: &[String],
    ) -> Result<Option<Uri<String>>, NotUpgradable> {
        if legacy(self.from) && obj.contains_key("$ref") {
            return Ok(None);
        }
        let Some(Value::String(id)) = obj.get(self.id_keyword()) else {
            return Ok(None);
        };
        let uri_part = id.split_once('#').map_or(id.as_str(), |(u, _)| u);
        if uri_part.is_empty() {
            return Ok(None);
        }
        referencing::uri::resolve_against(&base.borrow(), uri_part)
            .map(Some)
            .map_err(|_| NotUpgradable::InvalidUri {
                location: pointer(path),
                value: id.clone(),
            })
    }

    /// Indexes resources and references, then rewrites every pointer reference; repeated while
    /// references reveal new schema locations.
    pub(super) fn index(&mut self, root: &Value) -> Result<(), NotUpgradable> {
        for _ in 0..MAX_UPGRADE_PASSES {
            let mut index = Index::default();
            let base = root_uri();
            index.resources.insert(base.as_str().to_owned(), Vec::new());
            let recursive = anchors_recursion(root);
            self.visit(
                root,
                &mut Vec::new(),
                (&base, recursive),
                Shape::Schema,
                &mut index,
            )?;
            let before = self.marks.len();
            for site in &index.sites {
                self.resolve(root, &index, site)?;
            }
            if self.marks.len() == before {
                return Ok(());
            }
        }
        Err(NotUpgradable::TooManyPasses {
            limit: MAX_UPGRADE_PASSES,
        })
    }

    fn visit(
        &mut self,
        node: &Value,
        path: &mut Path,
        (base, recursive): (&Uri<String>, bool),
        shape: Shape,
        index: &mut Index,
    ) -> Result<(), NotUpgradable> {
        let shape = if shape == Shape::Plain && self.marks.contains(path.as_slice()) {
            Shape::Schema
        } else {
            shape
        };
        match (shape, node) {
            (Shape::Schema, Value::Object(obj)) => {
                let own;
                let (base, recursive) = match self.base_of(obj, base, path)? {
                    Some(b) => {
                        index.resources.insert(b.as_str().to_owned(), path.clone());
                        own = b;
                        (&own, anchors_recursion(node))
                    }
                    None => (base, recursive),
                };
                if recursive && obj.contains_key("$recursiveRef") {
                    self.dynamic.insert(path.clone());
                }
                self.note_anchors(obj);
                if let Some(Value::String(r)) = obj.get("$ref") {
                    index.sites.push(RefSite {
                        path: path.clone(),
                        base: base.clone(),
                        value: r.clone(),
                    });
                }
                for (k, v) in obj {
                    if self.dropped(obj, k) {
                        continue;
                    }
                    path.push(k.clone());
                    self.visit(v, path, (base, recursive), self.shape(k, v), index)?;
                    path.pop();
                }
            }
            (Shape::Map | Shape::Deps | Shape::Plain, Value::Object(obj)) => {
                for (k, v) in obj {
                    let inner = match shape {
                        Shape::Map => Shape::Schema,
                        Shape::Deps if !v.is_array() => Shape::Schema,
                        _ => Shape::Plain,
                    };
                    path.push(k.clone());
                    self.visit(v, path, (base, recursive), inner, index)?;
                    path.pop();
                }
            }
            (Shape::Array | Shape::Plain, Value::Array(items)) => {
                let inner = if shape == Shape::Array {
                    Shape::Schema
                } else {
                    Shape::Plain
                };
                for (i, v) in items.iter().enumerate() {
                    path.push(i.to_string());
                    self.visit(v, path, (base, recursive), inner, index)?;
                    path.pop();
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn note_anchors(&mut self, obj: &Map<String, Value>) {
        for key in ["$anchor", "$dynamicAnchor", self.id_keyword()] {
            if let Some(Value::String(s)) = obj.get(key) {
                let name = s.rsplit_once('#').map_or(s.as_str(), |(_, f)| f);
                self.anchors.insert(name.to_owned());
            }
        }
    }

    pub(super) fn free_anchor_name(&self) -> String {
        let mut name = "recursive".to_owned();
        let mut n = 0usize;
        while self.anchors.contains(&name) {
            n += 1;
            name = format!("recursive{n}");
        }
        name
    }

    /// Rewrites one reference's JSON pointer (if it has one and it points into this document)
    /// to follow the renamed keywords, and marks its target when that is not a schema position.
    fn resolve(
        &mut self,
        root: &Value,
        index: &Index,
        site: &RefSite,
    ) -> Result<(), NotUpgradable> {
        let location = || pointer(&site.path);
        let (uri_part, fragment) = match site.value.split_once('#') {
            Some((u, f)) => (u, f),
            None => return Ok(()),
        };
        let Some(raw) = fragment.strip_prefix('/') else {
            return Ok(());
        };
        let target =
            referencing::uri::resolve_against(&site.base.borrow(), uri_part).map_err(|_| {
                NotUpgradable::InvalidUri {
                    location: location(),
                    value: site.value.clone(),
                }
            })?;
        let doc = target
            .as_str()
            .split_once('#')
            .map_or(target.as_str(), |(d, _)| d);
        let Some(resource) = index.resources.get(doc) else {
            return Ok(()); // another document: a metaschema, or remote (refused by the policy)
        };
        let not_followed = || NotUpgradable::Pointer {
            location: location(),
            reference: site.value.clone(),
        };
        let raw_segs: Vec<&str> = raw.split('/').collect();
        let decoded = percent_decode(raw).ok_or_else(not_followed)?;
        let segs: Vec<String> = decoded
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        if segs.len() != raw_segs.len() {
            return Err(not_followed());
        }
        let mut node = follow(root, resource).ok_or_else(not_followed)?;
        let mut out: Vec<String> = raw_segs.iter().map(|s| (*s).to_owned()).collect();
        let mut shape = Shape::Schema;
        let mut at = resource.clone();
        let mut i = 0;
        while i < segs.len() {
            let seg = segs[i].as_str();
            let next_shape;
            if shape == Shape::Plain && self.marks.contains(&at) {
                shape = Shape::Schema;
            }
            match shape {
                Shape::Schema => {
                    let obj = node.as_object().ok_or_else(not_followed)?;
                    if self.dropped(obj, seg) {
                        return Err(NotUpgradable::RefIntoDropped {
                            location: location(),
                            reference: site.value.clone(),
                            keyword: seg.to_owned(),
                        });
                    }
                    let value = obj.get(seg).ok_or_else(not_followed)?;
                    next_shape = self.shape(seg, value);
                    match seg {
                        "definitions" if legacy(self.from) => out[i] = "$defs".to_owned(),
                        "items" if value.is_array() => out[i] = "prefixItems".to_owned(),
                        "additionalItems" => out[i] = "items".to_owned(),
                        "dependencies" => {
                            let key = segs.get(i + 1).ok_or_else(not_followed)?;
                            let dep = value.get(key).ok_or_else(not_followed)?;
                            out[i] = if dep.is_array() {
                                "dependentRequired"
                            } else {
                                "dependentSchemas"
                            }
                            .to_owned();
                            at.push(seg.to_owned());
                            at.push(key.clone());
                            node = dep;
                            shape = if dep.is_array() {
                                Shape::Plain
                            } else {
                                Shape::Schema
                            };
                            i += 2;
                            continue;
                        }
                        _ => {}
                    }
                    node = value;
                }
                Shape::Map | Shape::Deps | Shape::Array | Shape::Plain => {
                    next_shape = match shape {
                        Shape::Map | Shape::Array => Shape::Schema,
                        _ => Shape::Plain,
                    };
                    node = step(node, seg).ok_or_else(not_followed)?;
                }
            }
            at.push(seg.to_owned());
            shape = next_shape;
            i += 1;
        }
        if shape == Shape::Plain && !self.marks.contains(&at) {
            self.marks.insert(at);
        }
        if out.iter().zip(&raw_segs).any(|(a, b)| a != b) {
            self.refs
                .insert(site.path.clone(), format!("{uri_part}#/{}", out.join("/")));
        }
        Ok(())
    }
}

/// Whether a resource root carries `$recursiveAnchor: true`.
fn anchors_recursion(resource: &Value) -> bool {
    resource.get("$recursiveAnchor") == Some(&Value::Bool(true))
}

/// The value at `path` under `root`.
fn follow<'a>(root: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(root, |node, seg| step(node, seg))
}

fn step<'a>(node: &'a Value, seg: &str) -> Option<&'a Value> {
    match node {
        Value::Object(obj) => obj.get(seg),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

/// `%XX` escapes decoded; `None` for a broken escape, a character a fragment may not hold, or
/// bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let encoded = referencing::uri::EncodedString::new(s)?;
    encoded.decode().to_string().ok().map(|c| c.into_owned())
}
