//! What the gateway is told: its upstream servers and its policies, and the limits it keeps.

use std::time::Duration;

use mcpclient::{Reach, DEFAULT_TIMEOUT};

use crate::policy::naming::ToolFilter;

/// The first wait before restarting a server that failed to start or crashed; it doubles with
/// each failure in a row, up to [`MAX_BACKOFF`].
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between two restarts of a failing server.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A server that stayed up this long counts as healthy again: after its next crash the wait
/// starts over at [`INITIAL_BACKOFF`].
pub const STABLE_AFTER: Duration = Duration::from_secs(30);

/// How long starting a server (spawn or connect, the handshake, the first lists) may take,
/// unless its config entry says otherwise (`startupTimeout`). Counted from its turn to start
/// ([`MAX_CONCURRENT_STARTS`]), not from when it joined the queue.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The most servers being started at once (shared connections; the rest wait their turn in
/// config order). Starting an MCP server is mostly CPU: an interpreter loading, `npx` or `uvx`
/// resolving packages. Started all at once on a small machine, 49 servers that each start in
/// 0.2–17 s alone shared two cores, 28 of them hit [`START_TIMEOUT`] and every restart began
/// the scramble again. Eight (four per core on a 2-core machine) keeps the machine busy through
/// the waits of a start (disk, network, a sleep) while each start gets a share of the CPU that
/// lets it finish; a server that mostly waits (a remote HTTP server) holds a turn only for its
/// handshake. Measured against starting all at once in BENCHMARKS.md ("Startup with many
/// slow-starting servers"); other bounds were not measured.
pub const MAX_CONCURRENT_STARTS: usize = 8;

/// Most lines of a server's stderr written to the log when it fails to start.
pub const STDERR_TAIL_LINES: usize = 10;

/// How long a list request waits for servers that are still starting; those not ready by then
/// are left out of the answer, and the client is told when their tools arrive.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How often an idle HTTP server is asked a `ping`: one that does not answer is down (its tools
/// withdrawn, reconnected with backoff). Stdio servers need none: their pipe closes.
pub const HEALTH_INTERVAL: Duration = Duration::from_secs(15);

/// How long a health `ping` may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// How many times a request is sent again after a server's connection refused it unsent: the
/// connection had closed (the server exited) before its supervisor marked the server down, so
/// the request waits for the restart, as one that arrives while the server is down does, and
/// goes on the new connection. A request the connection took may have reached the server and
/// is never sent again.
pub const MAX_RESENDS: usize = 2;

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamConfig {
    /// The name in the config; the prefix of its tools' and prompts' exposed names.
    pub name: String,
    /// How it is reached.
    pub transport: Reach,
    /// Which of its tools are exposed (`allowTools`/`denyTools`).
    pub tools: ToolFilter,
    /// Whether its clients share one connection to it (`isolation`).
    pub isolation: Isolation,
    /// What its tools' and prompts' exposed names start with (`prefix`; `SERVER__` unless
    /// configured, and empty to expose them as they are).
    pub prefix: String,
    /// Which protocol era to speak to it (`protocol`): probe by default.
    pub protocol: mcpclient::Protocol,
    /// `"coerceArguments": "safe"`: arguments that violate a tool's `inputSchema` but for one
    /// unambiguous fix (a numeric or boolean string, a single value where an array is wanted)
    /// are sent fixed, logged, and the result's `_meta` says so ([`mcpclient::COERCED_META`]).
    /// Off by default.
    pub coerce_arguments: bool,
    /// How its tools are offered (`exposure`); the gateway's mode when `None`.
    pub exposure: Option<Exposure>,
    /// How long starting it may take (`startupTimeout`; [`START_TIMEOUT`] unless configured).
    pub start_timeout: Duration,
    /// Whether its tool lists are compared with the lock file (`pinning`); when `None`, warn
    /// if the lock file pins it and off otherwise.
    pub pinning: Option<Pinning>,
}

/// Whether the gateway's clients share a server (`"isolation"` in its config entry).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Isolation {
    /// One connection (for stdio: one process) for every session. A question the server asks
    /// goes to the session whose call caused it when that can be told, and is declined
    /// otherwise. The default: most servers never ask, and a process per client would multiply
    /// their cost for nothing.
    #[default]
    Shared,
    /// A connection (process) of its own for each client session, started on the session's
    /// first call to it and stopped when the session ends: what it asks, logs and updates can
    /// only be that session's. For servers that ask questions (elicitation, sampling) or keep
    /// per-client state. The gateway keeps one more connection for listing what it offers.
    PerSession,
}

/// How arguments that violate a tool's `inputSchema` are answered (nothing is sent upstream
/// either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InvalidArguments {
    /// JSON-RPC error -32602, `data.violations` the flat lines, the first in the message.
    #[default]
    Error,
    /// A tool result with `isError: true` whose text is the flat lines, as MCP 2025-11-25
    /// recommends, for clients that hide JSON-RPC errors from the model.
    ToolResult,
}

/// The JSON Schema dialect tool schemas are presented in to clients. Calls are checked against
/// the schemas as the server listed them either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DownstreamDialect {
    /// As the server listed them: what mcpx does not own passes unchanged.
    #[default]
    Original,
    /// Each schema of an older dialect as the equivalent 2020-12 document, for clients and model
    /// APIs that accept only 2020-12; one that cannot be upgraded exactly is passed on unchanged
    /// (`mcpx lint` names it).
    Draft202012,
}

/// The gateway's policies.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// How rejected arguments are answered.
    pub invalid_arguments: InvalidArguments,
    /// Start stdio servers on first use instead of at once.
    pub lazy: bool,
    /// How long a call to a server (or a question to the client) may take.
    pub timeout: Duration,
    /// How long a modern client's call waiting for input stays parked for its retry
    /// ([`PARKED_TTL`] unless configured).
    pub input_ttl: Duration,
    /// The dialect tool schemas are presented in.
    pub downstream_dialect: DownstreamDialect,
    /// Which tools are listed directly and which behind the gateway's search tools.
    pub exposure: ExposureOptions,
    /// Metrics, the audit log and traces ([`crate::observe::Observe`]).
    pub observe: crate::observe::Observe,
    /// The lock file of tool pinning (`mcpx.lock.json` beside the config); none, no pinning.
    pub lock_file: Option<std::path::PathBuf>,
    /// The most per-session server connections (for stdio, processes) at once
    /// ([`MAX_SESSION_SERVERS`] unless configured).
    pub max_session_servers: usize,
    /// The most per-session server connections one client's sessions hold at once
    /// ([`MAX_SESSION_SERVERS_PER_CLIENT`] unless configured).
    pub max_session_servers_per_client: usize,
    /// Where the protocol era each server was found to speak is kept between runs, so that
    /// its next start speaks it at once (the user's cache folder, which the binary names);
    /// none: each run learns again.
    pub eras: Option<servercache::EraMemory>,
    /// The secrets (the config's `${VAR}` values, …) kept out of the errors the gateway makes
    /// about its servers for a client: a server's last error or stderr may quote them.
    pub redactor: crate::observe::Redactor,
}

impl Default for GatewayOptions {
    fn default() -> GatewayOptions {
        GatewayOptions {
            invalid_arguments: InvalidArguments::Error,
            lazy: false,
            timeout: DEFAULT_TIMEOUT,
            input_ttl: PARKED_TTL,
            downstream_dialect: DownstreamDialect::Original,
            exposure: ExposureOptions::default(),
            observe: crate::observe::Observe::default(),
            lock_file: None,
            max_session_servers: MAX_SESSION_SERVERS,
            max_session_servers_per_client: MAX_SESSION_SERVERS_PER_CLIENT,
            eras: None,
            redactor: crate::observe::Redactor::default(),
        }
    }
}

/// How a server's tools are offered (`"exposure"`, in the gateway section and per server).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Exposure {
    /// Listed directly, each under its exposed name.
    #[default]
    All,
    /// Behind the gateway's search, describe and call tools (and `alwaysExpose`).
    Search,
    /// `search` when the gateway's whole tool list is past `AUTO_MAX_TOOLS` or
    /// `AUTO_MAX_LIST_BYTES` (see the exposure policy), else `all`.
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

/// Whether the gateway compares a server's tool lists with the lock file (`"pinning"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pinning {
    /// Not compared.
    Off,
    /// Each change logged and counted; the tools offered as listed. The default for a server
    /// the lock file pins.
    Warn,
    /// Logged and counted, and a changed or added tool withheld from clients until approved.
    Block,
}

/// How long a parked call waits for the client's retry before it lapses (unless configured,
/// [`crate::options::GatewayOptions::input_ttl`]). As long as the gateway's default call timeout: the
/// server's call times out then anyway.
pub const PARKED_TTL: Duration = Duration::from_secs(60);

/// The most per-session server connections at once unless configured
/// (`gateway.maxSessionServers`): each is a process for a stdio server, with its memory and
/// descriptors.
pub const MAX_SESSION_SERVERS: usize = 256;

/// The most per-session server connections one client's sessions hold at once unless
/// configured (`gateway.maxSessionServersPerClient`), counted per
/// [`crate::sessions::principal::Principal::quota_key`].
pub const MAX_SESSION_SERVERS_PER_CLIENT: usize = 16;
