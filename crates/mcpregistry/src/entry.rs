//! A server.json turned into an mcpx config entry.
//!
//! A package is started by its runtime: npm with `npx -y ID@VERSION`, PyPI with `uvx
//! ID==VERSION`, NuGet with `dnx ID@VERSION --yes`, OCI with `docker run -i --rm [-e NAME …]
//! IMAGE` (a `runtimeHint` names another runtime; `runtimeArguments` come before the package,
//! `packageArguments` after it). A remote is a `url` with `headers`. The first package that
//! mcpx can start is taken, else the first Streamable HTTP remote (or the reverse with
//! [`Prefer::Remote`]); an SSE-only remote or an MCPB file is refused, mcpx reaches neither.
//!
//! Every input (environment variable, argument, header, `{variable}` of a value) is resolved
//! the same way: its fixed `value`; a secret becomes a `${NAME}` reference to the environment
//! mcpx runs in, never asked for and never written; a required one is asked through the
//! caller's `ask` (a terminal prompt), else its `default`, else a `${NAME}` reference; an
//! optional one without a value or default is left out. Each `${NAME}` left for the user to
//! set is listed in [`Entry::needs`].

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::server::ServerJson;

/// Which of a server's ways to take when it has both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prefer {
    /// A package mcpx starts (the default).
    #[default]
    Package,
    /// A remote URL.
    Remote,
}

/// An input the caller may ask the user for.
#[derive(Debug, Clone)]
pub struct Question {
    /// The environment variable (or argument, header) it fills.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Its default.
    pub default: Option<String>,
    /// The values allowed, when listed.
    pub choices: Vec<String>,
}

/// A variable the user has to set in the environment mcpx runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// The variable.
    pub variable: String,
    /// What it is for.
    pub description: Option<String>,
    /// It holds a secret.
    pub secret: bool,
}

/// A config entry for a server.
#[derive(Debug, Clone)]
pub struct Entry {
    /// A name for it in the config: the part of the server's name after its `/`.
    pub name: String,
    /// The entry (`command`/`args`/`env`, or `url`/`headers`).
    pub entry: Value,
    /// What it runs: `npm @scope/pkg@1.0.0`, `streamable-http https://…`.
    pub source: String,
    /// Variables left for the user to set.
    pub needs: Vec<Need>,
}

/// An environment variable name for `text`: `config_path` → `CONFIG_PATH`.
fn variable_name(text: &str) -> String {
    let name: String = text
        .trim_start_matches('-')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "VALUE".into()
    } else {
        name
    }
}

struct Resolver<'a> {
    ask: &'a mut dyn FnMut(&Question) -> Option<String>,
    needs: Vec<Need>,
}

impl Resolver<'_> {
    /// The value of `input` known by `name`, `None` when it is optional and has none.
    fn resolve(&mut self, input: &Value, name: &str) -> Option<String> {
        let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        let flag = |k: &str| input.get(k).and_then(Value::as_bool) == Some(true);
        let variable = variable_name(name);
        let description = text("description");
        let reference = |this: &mut Self, secret: bool| {
            if !this.needs.iter().any(|n| n.variable == variable) {
                this.needs.push(Need {
                    variable: variable.clone(),
                    description: description.clone(),
                    secret,
                });
            }
            Some(format!("${{{variable}}}"))
        };
        if let Some(value) = text("value") {
            return Some(self.substitute(&value, input));
        }
        if flag("isSecret") {
            return reference(self, true);
        }
        if flag("isRequired") {
            let question = Question {
                name: variable.clone(),
                description: description.clone(),
                default: text("default"),
                choices: input
                    .get("choices")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            if let Some(answer) = (self.ask)(&question).filter(|a| !a.is_empty()) {
                return Some(answer);
            }
            return text("default").or_else(|| reference(self, false));
        }
        text("default")
    }

    /// `{name}` in `value` replaced by the input's `variables`, each resolved the same way;
    /// a name that is not a variable stays as it is.
    fn substitute(&mut self, value: &str, input: &Value) -> String {
        let Some(variables) = input.get("variables").and_then(Value::as_object) else {
            return value.to_owned();
        };
        let mut out = value.to_owned();
        for (name, variable) in variables {
            let key = format!("{{{name}}}");
            if out.contains(&key) {
                if let Some(resolved) = self.resolve(variable, name) {
                    out = out.replace(&key, &resolved);
                }
            }
        }
        out
    }

    /// Command-line words of `arguments` (positional and named).
    fn arguments(&mut self, arguments: Option<&Value>) -> Vec<String> {
        let mut words = Vec::new();
        for argument in arguments.and_then(Value::as_array).into_iter().flatten() {
            let kind = argument.get("type").and_then(Value::as_str);
            let hint = argument.get("valueHint").and_then(Value::as_str);
            match kind {
                Some("named") => {
                    let flag = argument
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let value = self.resolve(argument, flag);
                    match value {
                        Some(value) => {
                            words.push(flag.to_owned());
                            words.push(value);
                        }
                        // A flag with no value to give: given alone only when required.
                        None if argument.get("isRequired").and_then(Value::as_bool)
                            == Some(true) =>
                        {
                            words.push(flag.to_owned())
                        }
                        None => {}
                    }
                }
                _ => {
                    if let Some(value) = self.resolve(argument, hint.unwrap_or("argument")) {
                        words.push(value);
                    }
                }
            }
        }
        words
    }

    /// `{NAME: value}` of key-value inputs (environment variables, headers).
    fn pairs(&mut self, inputs: Option<&Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for input in inputs.and_then(Value::as_array).into_iter().flatten() {
            let Some(name) = input.get("name").and_then(Value::as_str) else {
                continue;
            };
            if let Some(value) = self.resolve(input, name) {
                out.insert(name.to_owned(), Value::String(value));
            }
        }
        out
    }
}

/// What runs a package: the command and the words naming the package.
fn runtime(package: &Value) -> Option<(String, Vec<String>)> {
    let text = |k: &str| package.get(k).and_then(Value::as_str).unwrap_or_default();
    let (id, version) = (text("identifier"), text("version"));
    let hint = package.get("runtimeHint").and_then(Value::as_str);
    Some(match text("registryType") {
        "npm" => (
            hint.unwrap_or("npx").to_owned(),
            vec!["-y".into(), format!("{id}@{version}")],
        ),
        "pypi" => (
            hint.unwrap_or("uvx").to_owned(),
            vec![format!("{id}=={version}")],
        ),
        "nuget" => (
            hint.unwrap_or("dnx").to_owned(),
            vec![format!("{id}@{version}"), "--yes".into()],
        ),
        "oci" => {
            let image = if version.is_empty() || id.contains(':') || id.contains('@') {
                id.to_owned()
            } else {
                format!("{id}:{version}")
            };
            (hint.unwrap_or("docker").to_owned(), vec![image])
        }
        _ => return None,
    })
}

fn package_entry(package: &Value, resolver: &mut Resolver<'_>) -> Option<(Value, String)> {
    let stdio = package.pointer("/transport/type").and_then(Value::as_str) == Some("stdio");
    let (command, package_words) = runtime(package)?;
    if !stdio {
        return None;
    }
    let oci = package.get("registryType").and_then(Value::as_str) == Some("oci");
    let env = resolver.pairs(package.get("environmentVariables"));
    let runtime_words = resolver.arguments(package.get("runtimeArguments"));
    let mut args: Vec<String> = Vec::new();
    if oci {
        args.extend(["run", "-i", "--rm"].map(str::to_owned));
        args.extend(runtime_words);
        // The container sees only the variables passed to it.
        for name in env.keys() {
            args.extend(["-e".to_owned(), name.clone()]);
        }
        args.extend(package_words.clone());
    } else if runtime_words.is_empty() {
        args.extend(package_words.clone());
    } else {
        args.extend(runtime_words);
        args.extend(
            package_words
                .iter()
                .filter(|w| *w != "-y" && *w != "--yes")
                .cloned(),
        );
    }
    args.extend(resolver.arguments(package.get("packageArguments")));
    let mut entry = json!({"command": command, "args": args});
    if !env.is_empty() {
        entry["env"] = Value::Object(env);
    }
    let kind = package
        .get("registryType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let source = format!(
        "{kind} {}",
        package_words
            .iter()
            .find(|w| !w.starts_with('-'))
            .cloned()
            .unwrap_or_default()
    );
    Some((entry, source))
}

fn remote_entry(remote: &Value, resolver: &mut Resolver<'_>) -> Option<(Value, String)> {
    if remote.get("type").and_then(Value::as_str) != Some("streamable-http") {
        return None;
    }
    let url = remote.get("url").and_then(Value::as_str)?;
    let url = resolver.substitute(url, remote);
    let headers = resolver.pairs(remote.get("headers"));
    let mut entry = json!({"type": "http", "url": url});
    if !headers.is_empty() {
        entry["headers"] = Value::Object(headers);
    }
    Some((entry, format!("streamable-http {url}")))
}

/// The config entry for `server`; `ask` is asked for each required input that is not a
/// secret and has no fixed value (answer `None` to take its default or leave a reference).
pub fn to_entry(
    server: &ServerJson,
    prefer: Prefer,
    ask: &mut dyn FnMut(&Question) -> Option<String>,
) -> Result<Entry, Error> {
    let value = server.value();
    let packages: Vec<&Value> = value
        .get("packages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let remotes: Vec<&Value> = value
        .get("remotes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let mut resolver = Resolver {
        ask,
        needs: Vec::new(),
    };
    let from_package = |r: &mut Resolver<'_>| packages.iter().find_map(|p| package_entry(p, r));
    let from_remote = |r: &mut Resolver<'_>| remotes.iter().find_map(|p| remote_entry(p, r));
    let found = match prefer {
        Prefer::Package => from_package(&mut resolver).or_else(|| from_remote(&mut resolver)),
        Prefer::Remote => from_remote(&mut resolver).or_else(|| from_package(&mut resolver)),
    };
    let Some((entry, source)) = found else {
        let kinds: Vec<String> = packages
            .iter()
            .map(|p| {
                p.get("registryType")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned()
            })
            .chain(remotes.iter().map(|r| {
                r.get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned()
            }))
            .collect();
        return Err(Error::Unusable {
            name: server.name().to_owned(),
            why: if kinds.is_empty() {
                "it lists no package and no remote".into()
            } else {
                format!(
                    "mcpx can start or reach none of what it offers ({}): it starts npm, PyPI, NuGet and OCI packages over stdio and reaches Streamable HTTP remotes",
                    kinds.join(", ")
                )
            },
        });
    };
    let name = server
        .name()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    Ok(Entry {
        name,
        entry,
        source,
        needs: resolver.needs,
    })
}
