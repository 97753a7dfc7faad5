//! A server.json turned into an mcpx config entry.
//!
//! A package is started by its runtime: npm with `npx -y ID@VERSION`, PyPI with `uvx
//! ID==VERSION`, NuGet with `dnx ID@VERSION --yes`, OCI with `docker run -i --rm [-e NAME …]
//! IMAGE` (`runtimeArguments` come before the package, `packageArguments` after it). The
//! runtime is fixed by the registry type: a `runtimeHint` naming another program, or an
//! identifier that starts with `-` (it would read as an option), makes the package one mcpx
//! does not start. A remote is a `url` with `headers`. The first package that mcpx can start
//! is taken, else the first Streamable HTTP remote (or the reverse with [`Prefer::Remote`]);
//! an SSE-only remote or an MCPB file is refused, mcpx reaches neither.
//!
//! Every input (environment variable, argument, header, `{variable}` of a value) is resolved
//! the same way: its fixed `value`; a required secret becomes a `${NAME}` reference to the
//! environment mcpx runs in, never asked for and never written; an optional secret is left
//! out; a required one is asked through the caller's `ask` (a terminal prompt), else its
//! `default`, else a `${NAME}` reference; an optional one without a value or default is left
//! out. Each `${NAME}` left for the user to set is listed in [`Entry::needs`].
//!
//! Input names are generic (`API_KEY`, `AUTHORIZATION`), and one server's secret must never
//! be sent to another: a reference is named after the server's name in the config and the
//! input (`REMOTE_WEATHER_AUTHORIZATION`), numbered on when another server of the config
//! already refers to that name ([`Naming::taken`]).

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

/// The registry types mcpx starts, and the one runtime each is started with.
const RUNTIMES: [(&str, &str); 4] = [
    ("npm", "npx"),
    ("pypi", "uvx"),
    ("oci", "docker"),
    ("nuget", "dnx"),
];

/// How the entry and its variables are named.
#[derive(Debug, Clone, Default)]
pub struct Naming {
    /// The server's name in the config (default: [`default_name`]).
    pub name: Option<String>,
    /// The variables the config's other servers already refer to.
    pub taken: Vec<String>,
}

/// The name a server gets in the config: the part of its registry name after the `/`.
pub fn default_name(server: &ServerJson) -> String {
    server
        .name()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned()
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
    /// What the references start with: the server's config name as a variable name.
    prefix: String,
    taken: &'a [String],
}

impl Resolver<'_> {
    /// The value of `input` known by `name`, `None` when it is optional and has none.
    fn resolve(&mut self, input: &Value, name: &str) -> Option<String> {
        let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        let flag = |k: &str| input.get(k).and_then(Value::as_bool) == Some(true);
        let variable = self.variable(name);
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
            // An optional secret is left out rather than made a reference that must be set.
            return if flag("isRequired") {
                reference(self, true)
            } else {
                None
            };
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

    /// The reference's name for the input `name`: `PREFIX_NAME`, numbered on (`_2`, …) past
    /// a name another server of the config refers to.
    fn variable(&self, name: &str) -> String {
        let base = format!("{}_{}", self.prefix, variable_name(name));
        let mut variable = base.clone();
        let mut n = 1;
        while self.taken.contains(&variable) {
            n += 1;
            variable = format!("{base}_{n}");
        }
        variable
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

/// What runs a package: the command and the words naming the package; `Err` says why mcpx
/// does not start it.
fn runtime(package: &Value) -> Result<(String, Vec<String>), String> {
    let text = |k: &str| package.get(k).and_then(Value::as_str).unwrap_or_default();
    let (kind, id, version) = (text("registryType"), text("identifier"), text("version"));
    let Some((_, command)) = RUNTIMES.iter().find(|(k, _)| *k == kind) else {
        return Err(format!("{kind} packages are not started by mcpx"));
    };
    if let Some(hint) = package.get("runtimeHint").and_then(Value::as_str) {
        if hint != *command {
            return Err(format!(
                "its runtime hint '{hint}' is not {command}, the one mcpx runs {kind} packages with"
            ));
        }
    }
    if id.starts_with('-') || version.starts_with('-') {
        return Err(format!(
            "its identifier or version starts with '-', which {command} would read as an option"
        ));
    }
    let words = match kind {
        "npm" => vec!["-y".into(), format!("{id}@{version}")],
        "pypi" => vec![format!("{id}=={version}")],
        "nuget" => vec![format!("{id}@{version}"), "--yes".into()],
        _ => {
            let image = if version.is_empty() || id.contains(':') || id.contains('@') {
                id.to_owned()
            } else {
                format!("{id}:{version}")
            };
            vec![image]
        }
    };
    Ok(((*command).to_owned(), words))
}

fn package_entry(
    package: &Value,
    resolver: &mut Resolver<'_>,
    refused: &mut Vec<String>,
) -> Option<(Value, String)> {
    let stdio = package.pointer("/transport/type").and_then(Value::as_str) == Some("stdio");
    let (command, package_words) = match runtime(package) {
        Ok(runtime) => runtime,
        Err(why) => {
            refused.push(why);
            return None;
        }
    };
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
    naming: &Naming,
    ask: &mut dyn FnMut(&Question) -> Option<String>,
) -> Result<Entry, Error> {
    let value = server.value();
    let name = naming.name.clone().unwrap_or_else(|| default_name(server));
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
        prefix: variable_name(&name),
        taken: &naming.taken,
    };
    let mut refused = Vec::new();
    let mut from_package = |r: &mut Resolver<'_>| {
        packages
            .iter()
            .find_map(|p| package_entry(p, r, &mut refused))
    };
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
            } else if !refused.is_empty() {
                format!("mcpx starts none of what it offers: {}", refused.join("; "))
            } else {
                format!(
                    "mcpx can start or reach none of what it offers ({}): it starts npm, PyPI, NuGet and OCI packages over stdio and reaches Streamable HTTP remotes",
                    kinds.join(", ")
                )
            },
        });
    };
    Ok(Entry {
        name,
        entry,
        source,
        needs: resolver.needs,
    })
}
