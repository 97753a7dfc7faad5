//! Command-line arguments: the raw form clap parses, and the checked form commands run on.
//!
//! In the library, not the binary, so that everything generated from the definitions (the
//! shell completions, the man pages, the manual's CLI reference: `cargo xtask`) reads the
//! same ones the binary parses with, and a new command appears in all of them unedited.

// The doc comments below are the help text clap prints on a terminal (`SERVER<TAB>TOOL`), not
// HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};

/// The commit mcpx was built from and its date (`build.rs`: `MCPX_COMMIT` if set, else `git`,
/// else the crate's `.cargo_vcs_info.json`), or `unknown` (a tarball without either).
pub const COMMIT: &str = env!("MCPX_COMMIT");

/// The largest `--limit` of `tools --search`: the index's own bound, as clap's range type.
pub const MAX_SEARCH_LIMIT: i64 = toolsearch::MAX_LIMIT as i64;

/// The most worker threads `--threads` takes.
pub const MAX_THREADS: u16 = 1024;

/// `mcpx -V`: the version and the commit.
pub fn version() -> String {
    format!("{} (commit {COMMIT})", env!("CARGO_PKG_VERSION"))
}

/// `mcpx --version`: also the MCP protocol versions spoken, from the constants the gateway
/// and the client use.
pub fn long_version() -> String {
    format!(
        "{}\nMCP versions served (mcpx serve): {}\nMCP versions spoken to servers: {}",
        version(),
        mcpgateway::supported_versions().join(", "),
        mcpclient::SUPPORTED_VERSIONS.join(", ")
    )
}

/// The whole command-line interface as clap builds it, with the versions above: what the binary
/// parses with, and what completions, man pages and the CLI reference are made from.
pub fn command() -> clap::Command {
    Cli::command()
        .version(version())
        .long_version(long_version())
}

/// Exit code: the answer is no (an instance is invalid).
pub const EXIT_NO: u8 = 1;
/// Exit code: mcpx could not do its job.
pub const EXIT_TROUBLE: u8 = 2;

/// The exit code of a command over several servers: trouble when one `failed` (the others
/// still reported), else no when the answer `is_no`, else success.
pub fn verdict(failed: bool, is_no: bool) -> std::process::ExitCode {
    if failed {
        std::process::ExitCode::from(EXIT_TROUBLE)
    } else if is_no {
        std::process::ExitCode::from(EXIT_NO)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

const EXIT_CODES: &str = "\
Config: --config FILE, else ./mcpx.json, else mcpx/config.json in the user's config folder
($XDG_CONFIG_HOME or ~/.config; %APPDATA% on Windows), in the
mcpServers format ({\"mcpServers\": {\"NAME\": {\"command\": ..., \"args\": [...]}}} or {\"url\": ...}).

Exit codes:
  0  success
  1  the answer is no: arguments rejected, an isError result or a JSON-RPC error,
     an invalid instance, a lint problem
  2  mcpx could not do its job: config, spawn, transport, timeout, unreadable files;
     for servers, tools and lint: a server failed to start (the others are still reported)";

/// `--metrics`: an address, or a port on 127.0.0.1.
fn metrics_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("'{text}' is neither ADDRESS:PORT nor a port"))
}

/// `mcpx`: its global options and its command.
#[derive(Debug, Parser)]
#[command(name = "mcpx", version, long_about = None, about = "Gateway and command-line client for MCP servers, enforcing their tool schemas", after_help = EXIT_CODES)]
pub struct Cli {
    /// The config file (default: ./mcpx.json, then mcpx/config.json in $XDG_CONFIG_HOME,
    /// ~/.config, or %APPDATA% on Windows).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Log in through the browser when a server asks for it, also without a terminal (the
    /// browser named by $BROWSER, else the system's; the URL is printed either way).
    #[arg(long, global = true)]
    pub login: bool,
    /// Log errors only on stderr (warnings are shown by default; MCPX_LOG, a filter such as
    /// `debug`, overrides -q and -v).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Log more on stderr: -v what mcpx does, -vv and -vvv debugging detail.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the configured servers: transport, whether it starts, protocol version, tools.
    #[command(
        after_help = "Examples:\n  mcpx servers\n  mcpx --config examples/mcpx.json servers --json"
    )]
    Servers {
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// List tools, or show one tool's arguments as a table.
    #[command(
        after_help = "Examples:\n  mcpx tools\n  mcpx tools demo\n  mcpx tools demo get-sum\n  mcpx tools demo --json\n  mcpx tools --json --dialect 2020-12\n  mcpx tools --search \"add two numbers\""
    )]
    Tools {
        /// Only this server's tools.
        server: Option<String>,
        /// Show this tool in detail.
        #[arg(conflicts_with = "search")]
        tool: Option<String>,
        /// Rank the tools for a task in plain words (best first; exit 1 when none
        /// matches): SERVER<TAB>TOOL(ARGUMENTS)<TAB>DESCRIPTION, or with --json as the gateway's
        /// search tool returns them.
        #[arg(long, value_name = "QUERY")]
        search: Option<String>,
        /// With --search: rank at most this many tools (default 10, at most 50).
        #[arg(long, value_name = "N", requires = "search", value_parser = clap::value_parser!(u16).range(1..=MAX_SEARCH_LIMIT))]
        limit: Option<u16>,
        /// Print the raw tool objects as the server listed them.
        #[arg(long)]
        json: bool,
        /// With --json: present the schemas in this dialect, as `mcpx serve` does with
        /// "downstreamDialect" (2020-12: each schema of an older dialect as its exact 2020-12
        /// equivalent; one that has none as listed, named by `mcpx lint`).
        #[arg(long, value_name = "DIALECT", requires = "json", value_parser = ["original", "2020-12"], default_value = "original")]
        dialect: String,
        /// Ask the servers for their tools even when the cache holds a list of the last hour.
        #[arg(long)]
        refresh: bool,
    },
    /// Call a tool; its arguments are checked against its inputSchema before anything is sent.
    #[command(
        after_help = "ARGS: one JSON object, @FILE, - (standard input), or key=value pairs typed by the\ninputSchema, through $ref, anyOf and oneOf: a value that reads as JSON (5, 1.5, true, null)\nis sent as such where the schema names that type and accepts it, else as the string where\nstrings are allowed; key:=JSON sends exactly the JSON given.\n\nExamples:\n  mcpx call demo get-sum a=2 b=3\n  mcpx call demo get-sum '{\"a\": 2, \"b\": 3}'\n  mcpx call demo echo text:='\"hi\"' --json\n\nExit codes:\n  0  the call succeeded\n  1  the call failed: arguments rejected (one line per problem on stderr), an isError result,\n     or a JSON-RPC error\n  2  mcpx could not do its job: config, spawn, transport, timeout"
    )]
    Call {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The arguments.
        args: Vec<String>,
        /// Print the raw result exactly as received.
        #[arg(long)]
        json: bool,
        /// Answer the server's elicitation request with this JSON content; fields left out take
        /// the requested schema's defaults. Without it the questions are asked on the terminal,
        /// or declined when there is none.
        #[arg(long, value_name = "JSON")]
        elicit: Option<String>,
        /// Where images and audio in the result are saved.
        #[arg(long, value_name = "DIR", default_value = ".")]
        save_dir: PathBuf,
    },
    /// Log in to a server that asks for OAuth, show what is stored, or forget it.
    #[command(
        subcommand,
        after_help = "Tokens are kept in the OS keyring (Keychain, Credential Manager, Secret Service), else in\nmcpx/credentials.json in the user's config folder ($XDG_CONFIG_HOME or ~/.config; %APPDATA%\non Windows; readable by its owner only); MCPX_CREDENTIALS=FILE names the file to use instead.\n\nExamples:\n  mcpx auth login notes\n  mcpx auth status\n  mcpx auth logout notes"
    )]
    Auth(AuthCommand),
    /// Compile every tool schema under the policy and list each problem (exit 1 when any);
    /// with --target, also what that provider's tool-calling API rejects or ignores.
    #[command(
        after_help = "Examples:\n  mcpx lint\n  mcpx lint demo\n  mcpx lint --target anthropic --target gemini\n\nWith --target, a tool the provider would refuse counts as a problem; what it refuses only\nfor strict tools (strict: true) is listed as a note. Names are checked as the gateway\nexposes them (SERVER__TOOL)."
    )]
    Lint {
        /// Only this server.
        server: Option<String>,
        /// Also check against this provider's tool-calling API (repeat for more).
        #[arg(long, value_parser = ["anthropic", "openai", "gemini"])]
        target: Vec<String>,
        /// Ask the servers for their tools even when the cache holds a list of the last hour.
        #[arg(long)]
        refresh: bool,
    },
    /// Record each tool's definition (name, description, annotations, input and output
    /// schemas) in mcpx.lock.json beside the config; with --check, print what changed since,
    /// classified (exit 1 when anything did); with --approve, show one server's (or tool's)
    /// changes and record them (a running gateway takes them within a second).
    #[command(
        after_help = "Examples:\n  mcpx pin\n  mcpx pin demo\n  mcpx pin --check          # in CI or cron\n  mcpx pin --approve demo/echo"
    )]
    Pin {
        /// Only this server.
        #[arg(conflicts_with = "approve")]
        server: Option<String>,
        /// Compare against the lock file instead of writing it.
        #[arg(long, conflicts_with = "approve")]
        check: bool,
        /// Show what changed in SERVER (or in its tool TOOL) since pinned, then record it.
        #[arg(long, value_name = "SERVER[/TOOL]")]
        approve: Option<String>,
    },
    /// Serve every configured server as one MCP server, enforcing their tool schemas.
    #[command(
        after_help = "Tools are exposed as SERVER__TOOL. Arguments that violate a tool's inputSchema are\nrefused before they are sent (JSON-RPC error -32602 with one line per problem, or an isError\nresult with \"gateway\": {\"invalidArguments\": \"tool-result\"} in the config); results are\nforwarded unchanged, an outputSchema mismatch only logged on stderr.\n\nExamples:\n  mcpx serve                          # stdio: the client starts mcpx\n  mcpx serve --http                   # http://127.0.0.1:8787/mcp\n  MCPX_TOKEN=secret mcpx serve --http 0.0.0.0:8787\n  mcpx serve --http --watch           # reload the config when it changes\n\nSIGHUP reloads the config. Logs go to stderr (default: info; -q errors only, -v debug);\nMCPX_LOG sets their filter instead."
    )]
    Serve {
        /// Serve over stdin/stdout (the default).
        #[arg(long, conflicts_with = "http")]
        stdio: bool,
        /// Serve Streamable HTTP on ADDR at /mcp (default 127.0.0.1:8787).
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = mcpgateway::DEFAULT_HTTP_ADDR)]
        http: Option<std::net::SocketAddr>,
        /// The bearer token HTTP clients must send; needed to listen beyond loopback.
        #[arg(long, env = "MCPX_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Start stdio servers on first use instead of at once.
        #[arg(long)]
        lazy: bool,
        /// Seconds a call to a server may take.
        #[arg(long, value_name = "SECONDS", default_value_t = 60)]
        timeout: u64,
        /// Reload the config when its file changes (SIGHUP reloads it either way): servers
        /// added, removed or changed are started, stopped or restarted; the rest go on.
        #[arg(long)]
        watch: bool,
        /// Serve Prometheus metrics at http://ADDR/metrics (ADDR or a port on 127.0.0.1); the
        /// HTTP front serves them at /metrics already.
        #[arg(long, value_name = "ADDR", value_parser = metrics_addr)]
        metrics: Option<std::net::SocketAddr>,
        /// Append the audit log (one JSON line per verdict) to FILE, instead of gateway.audit.file.
        #[arg(long, value_name = "FILE")]
        audit: Option<std::path::PathBuf>,
        /// Seconds the requests in flight get to finish after SIGTERM or SIGINT, while no new
        /// session is taken (a second signal stops at once), or after the end of the input on
        /// stdio. 0: stop at once.
        #[arg(long, value_name = "SECONDS", default_value_t = mcpgateway::DRAIN_TIMEOUT.as_secs())]
        drain_timeout: u64,
        /// Worker threads of the HTTP front [default: one per core, at least 2]. 1: everything
        /// on one thread, as on the stdio front: the least CPU per call (no hand-offs between
        /// workers), for one client at a time; one client's huge request holds up the others.
        #[arg(long, value_name = "N", requires = "http",
            value_parser = clap::value_parser!(u16).range(1..=i64::from(MAX_THREADS)))]
        threads: Option<u16>,
        /// Also serve /healthz and /readyz on ADDR (for the stdio front; the HTTP front serves
        /// them on its own address).
        #[arg(long, value_name = "ADDR", conflicts_with = "http")]
        health: Option<std::net::SocketAddr>,
    },
    /// Copy a client's MCP servers into mcpx's config (names already there with the same
    /// entry are merged; different ones are added as NAME-CLIENT).
    #[command(
        after_help = "CLIENT: claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, zed;\nor --file PATH --format CLIENT|mcp-servers for a file of that shape.\n\nExamples:\n  mcpx import cursor\n  mcpx import claude-code --scope project --dry-run\n  mcpx import --file ./mcp.json --format mcp-servers"
    )]
    Import {
        /// Which client's file.
        #[command(flatten)]
        target: ClientArgs,
        /// Show what would change (secrets masked); write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Import a client's servers, then make `mcpx serve` its only server (backup first; run
    /// again, nothing changes; `mcpx uninstall` puts the servers back).
    #[command(
        after_help = "The client's entry starts this mcpx as `mcpx serve --config ABSOLUTE-CONFIG`; with\n--http URL it connects to a running `mcpx serve --http` instead. Everything else in the\nclient's file is left as it is. What install replaced is recorded in mcpx.installs.json\nbeside the config.\n\nExamples:\n  mcpx install claude-code\n  mcpx install vscode --scope project --dry-run\n  mcpx install cursor --http http://127.0.0.1:8787/mcp\n  mcpx install claude-code --http https://gw.example.com/mcp --token-env GW_TOKEN"
    )]
    Install {
        /// Which client's file.
        #[command(flatten)]
        target: ClientArgs,
        /// Show what would change (secrets masked); write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Point the client at a running `mcpx serve --http` at URL instead of starting mcpx.
        #[arg(long, value_name = "URL", value_parser = http_url)]
        http: Option<String>,
        /// With --http: the environment variable, where the client runs, holding the gateway's
        /// bearer token (its MCPX_TOKEN); needed for a URL beyond this machine.
        #[arg(long, value_name = "VAR", requires = "http", value_parser = variable_name)]
        token_env: Option<String>,
    },
    /// Put back the servers `mcpx install` replaced in a client (keeping servers the client
    /// added since), and remove the entry install wrote.
    #[command(
        after_help = "Examples:\n  mcpx uninstall claude-code\n  mcpx uninstall vscode --scope project"
    )]
    Uninstall {
        /// Which client's file.
        #[command(flatten)]
        target: ClientArgs,
        /// Show what would change; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Add a server from the MCP Registry to mcpx's config (or find one with --search).
    #[command(
        after_help = "The server's latest server.json is checked against the registry's schema, then turned into\nan entry: a package started by its runtime (npx -y, uvx, dnx, docker run), or a Streamable\nHTTP remote. Secret inputs become ${VAR} references to set in mcpx's environment; other\nrequired ones are asked for on a terminal, and listed to set otherwise.\n\nExamples:\n  mcpx add --search filesystem\n  mcpx add io.github.user/weather\n  mcpx add io.github.user/weather --remote --as weather-api --dry-run\n  MCPX_REGISTRY=http://127.0.0.1:8080 mcpx add com.example/tool"
    )]
    Add {
        /// The server's name in the registry (io.github.user/weather).
        #[arg(required_unless_present = "search", conflicts_with = "search")]
        name: Option<String>,
        /// List the servers whose name or description holds WORDS (the first 30; stderr says
        /// when more match).
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        /// The registry to ask.
        #[arg(long, value_name = "URL", env = "MCPX_REGISTRY", default_value = mcpregistry::OFFICIAL_REGISTRY)]
        registry: String,
        /// The server's name in mcpx's config (default: its name after the '/').
        #[arg(long = "as", value_name = "NAME")]
        as_name: Option<String>,
        /// Take the server's remote URL rather than a package, when it has both.
        #[arg(long)]
        remote: bool,
        /// Show the entry (secrets masked); write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check the setup, one line per check with its fix: the config parses, each server's
    /// command is on PATH, each server starts and lists its tools, stored logins are valid,
    /// the --http address is free, and which clients have mcpx installed (exit 1 when a check
    /// fails).
    Doctor {
        /// The address `mcpx serve --http` would listen on.
        #[arg(long, value_name = "ADDR", default_value = mcpgateway::DEFAULT_HTTP_ADDR)]
        http: std::net::SocketAddr,
    },
    /// Serve the bundled demo MCP server on stdin/stdout (what examples/mcpx.json starts).
    DemoServer {
        /// Also list tools whose schemas break the policy (for `mcpx lint`).
        #[arg(long)]
        broken: bool,
        /// Also list tools that misbehave (`crash`, `slow`), for tests.
        #[arg(long, hide = true)]
        faults: bool,
        /// Also list this many generated tools, for benchmarks.
        #[arg(long, hide = true, value_name = "N", default_value_t = 0)]
        generated_tools: usize,
        /// Do not stop when standard input ends (linger 60 s), for tests.
        #[arg(long, hide = true)]
        stubborn: bool,
        /// Also offer a resource subscription, logging and a `notify` tool, for tests.
        #[arg(long, hide = true)]
        notifying: bool,
        /// List echo changed and a new tool, as a server that changed after it was pinned.
        #[arg(long, hide = true)]
        drifted: bool,
        /// Append the conversation to FILE as a transcript, for tests.
        #[arg(long, hide = true, value_name = "FILE")]
        record: Option<std::path::PathBuf>,
        /// Wait this long before reading anything, for the startup benchmark.
        #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 0.0, value_parser = seconds_for_start)]
        start_delay: f64,
        /// Then use this much CPU time, for the startup benchmark.
        #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 0.0, value_parser = seconds_for_start)]
        start_cpu: f64,
        /// Speak this protocol era: legacy (server/discover unknown), modern (2026-07-28 only)
        /// or dual (both), for the probe's tests.
        #[arg(long, hide = true, value_parser = ["legacy", "modern", "dual"], default_value = "legacy")]
        era: String,
        /// Die on a request whose method it does not know (server/discover to a legacy
        /// server), as servers on the MCP Python SDK 1.6 do, for the probe's tests.
        #[arg(long, hide = true)]
        crash_on_unknown_method: bool,
    },
    /// Compile and apply JSON Schemas under mcpx's policy (offline, bounded, formats as annotations).
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Print the shell completion script for mcpx.
    #[command(
        after_help = "Examples:\n  mcpx completions bash > ~/.local/share/bash-completion/completions/mcpx\n  mcpx completions zsh > ~/.zfunc/_mcpx          # with fpath+=(~/.zfunc) before compinit\n  mcpx completions fish > ~/.config/fish/completions/mcpx.fish\n  mcpx completions powershell >> $PROFILE\n\nThe Debian package installs them for bash, zsh and fish already."
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// `--http URL`: an http or https URL.
fn http_url(text: &str) -> Result<String, String> {
    if text.starts_with("http://") || text.starts_with("https://") {
        Ok(text.to_owned())
    } else {
        Err("want an http:// or https:// URL".into())
    }
}

/// `--token-env VAR`: an environment variable's name.
fn variable_name(text: &str) -> Result<String, String> {
    let plain = !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        Ok(text.to_owned())
    } else {
        Err("want a variable name: letters, digits and _".into())
    }
}

/// Which client file: a client and a scope, or a file and its shape.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The client (required unless --file is given).
    #[arg(value_name = "CLIENT", required_unless_present = "file")]
    client: Option<String>,
    /// Which of the client's files: user (default), project (in this folder), or local
    /// (Claude Code's per-project entries in ~/.claude.json).
    #[arg(long, value_parser = ["user", "project", "local"])]
    scope: Option<String>,
    /// A config file of the shape --format names, instead of the client's own.
    #[arg(long, value_name = "PATH", conflicts_with = "scope")]
    file: Option<PathBuf>,
    /// The shape of --file: a client name, or mcp-servers for {"mcpServers": {...}}.
    #[arg(long, value_name = "FORMAT", requires = "file")]
    format: Option<String>,
}

/// A client file chosen on the command line.
#[derive(Debug)]
pub enum ClientChoice {
    /// The client's own file of a scope.
    Client(mcpclients::Client, mcpclients::Scope),
    /// A file in a client's shape.
    File(mcpclients::Client, PathBuf),
}

impl ClientArgs {
    /// Checks the names: a known client, or a file with its shape.
    pub fn checked(&self) -> anyhow::Result<ClientChoice> {
        if let Some(file) = &self.file {
            let shape = self
                .format
                .as_deref()
                .or(self.client.as_deref())
                .ok_or_else(|| {
                    anyhow::anyhow!("--file needs --format CLIENT or --format mcp-servers")
                })?;
            return Ok(ClientChoice::File(
                mcpclients::Client::from_name(shape)?,
                file.clone(),
            ));
        }
        let name = self.client.as_deref().unwrap_or_default();
        let client = mcpclients::Client::from_name(name)?;
        let scope = self
            .scope
            .as_deref()
            .and_then(mcpclients::Scope::from_name)
            .unwrap_or(mcpclients::Scope::User);
        Ok(ClientChoice::Client(client, scope))
    }
}

/// The longest `--start-delay` or `--start-cpu` of the demo server.
const MAX_START_SECONDS: f64 = 600.0;

/// Seconds from 0 to [`MAX_START_SECONDS`].
fn seconds_for_start(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..=MAX_START_SECONDS).contains(&s) => Ok(s),
        _ => Err(format!("want seconds from 0 to {MAX_START_SECONDS}")),
    }
}

/// `mcpx schema …`.
#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Compile schemas under the policy and report every one that fails.
    #[command(
        after_help = "Examples:\n  mcpx schema check tool-input.json\n  mcpx schema check schemas/*.json\n\nExit codes:\n  0  every schema compiles\n  2  a schema does not compile or can't be read (one line per failure: FILE: <error>)"
    )]
    Check(CheckArgs),
    /// Validate instances against a schema, printing one line per problem.
    #[command(
        after_help = "Examples:\n  mcpx schema validate --schema tool-input.json args.json\n  echo '{\"count\": 3}' | mcpx schema validate --schema tool-input.json -\n\nExit codes:\n  0  every instance is valid\n  1  an instance is invalid (its problems on stdout, one line each)\n  2  the schema does not compile, or a file can't be read or parsed"
    )]
    Validate(ValidateArgs),
}

/// `mcpx schema check`'s arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Schema files to compile.
    #[arg(required = true, value_name = "SCHEMA_FILE")]
    files: Vec<PathBuf>,
    /// Print a JSON report instead of lines.
    #[arg(long)]
    json: bool,
}

/// `mcpx schema validate`'s arguments.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The schema to validate against.
    #[arg(long, value_name = "SCHEMA_FILE")]
    schema: PathBuf,
    /// Instance files to validate; `-` reads standard input.
    #[arg(required = true, value_name = "INSTANCE_FILE")]
    instances: Vec<PathBuf>,
    /// Print a JSON report instead of lines.
    #[arg(long)]
    json: bool,
}

/// Where an input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `-`: standard input.
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Source {
    fn from_arg(path: &Path) -> Source {
        if path.as_os_str() == "-" {
            Source::Stdin
        } else {
            Source::File(path.to_path_buf())
        }
    }

    /// How the source is named in output.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "-".to_owned(),
            Source::File(path) => path.display().to_string(),
        }
    }
}

/// A schema command whose arguments have been checked.
#[derive(Debug)]
pub enum Schema {
    /// `mcpx schema check`.
    Check {
        /// The schemas to compile.
        files: Vec<Source>,
        /// A JSON report instead of lines.
        json: bool,
    },
    /// `mcpx schema validate`.
    Validate {
        /// The schema.
        schema: Source,
        /// The instances to validate against it.
        instances: Vec<Source>,
        /// A JSON report instead of lines.
        json: bool,
    },
}

impl SchemaCommand {
    /// Checks what clap cannot: standard input is read at most once.
    pub fn checked(self) -> anyhow::Result<Schema> {
        let (sources, command) = match self {
            SchemaCommand::Check(args) => {
                let files: Vec<Source> = args.files.iter().map(|p| Source::from_arg(p)).collect();
                (
                    files.clone(),
                    Schema::Check {
                        files,
                        json: args.json,
                    },
                )
            }
            SchemaCommand::Validate(args) => {
                let schema = Source::from_arg(&args.schema);
                let instances: Vec<Source> =
                    args.instances.iter().map(|p| Source::from_arg(p)).collect();
                let mut all = instances.clone();
                all.push(schema.clone());
                (
                    all,
                    Schema::Validate {
                        schema,
                        instances,
                        json: args.json,
                    },
                )
            }
        };
        let stdin_uses = sources.iter().filter(|s| **s == Source::Stdin).count();
        anyhow::ensure!(
            stdin_uses <= 1,
            "`-` (standard input) can be given only once"
        );
        Ok(command)
    }
}

/// `mcpx auth …`.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Log in now: the authorization URL is printed and opened in the browser.
    Login {
        /// The server.
        server: String,
    },
    /// Show what is stored for each HTTP server (never the tokens).
    Status {
        /// Only this server.
        server: Option<String>,
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Forget a server's tokens.
    Logout {
        /// The server.
        server: String,
    },
}
