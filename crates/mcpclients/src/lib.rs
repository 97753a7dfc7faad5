//! The MCP clients people already use, and putting mcpx in front of their servers.
//!
//! - Where each client keeps its servers, per platform and scope ([`Target::locate`]; the
//!   table of locations and shapes is in the `client` module's source), from [`Places`] the
//!   caller reads from its environment: this crate reads no environment variable, prints
//!   nothing and never exits.
//! - [`import`]: copies a client's servers into mcpx's config. A name already there with the
//!   same entry is merged; with another entry the import is renamed `NAME-CLIENT`
//!   ([`Outcome`]). `env`, `headers`, `cwd` and URLs are kept as written; the client's variable
//!   forms become mcpx's `${VAR}` where the client expands them, and an entry mcpx cannot read
//!   as the client does stays in the client's file, with the reason.
//! - [`install`]: imports, then makes the gateway (`mcpx serve --config ABS`, or a running
//!   `mcpx serve --http` at a URL) the client's only server. It backs the file up first
//!   (`FILE.mcpx-backup-YYYYMMDDTHHMMSSZ`), records what it replaced in `mcpx.installs.json`
//!   beside mcpx's config ([`RECORD_FILE`]; why there, in the `record` module), and changes
//!   nothing when run again. Codex's entry lists the variables mcpx's servers need in
//!   `env_vars`, as Codex passes a server no others.
//! - [`uninstall`]: puts the recorded servers back in their order, JSON-equal, keeping every
//!   server the client added or changed meanwhile.
//!
//! Every change is a splice of the servers member alone: the rest of the file (the client's
//! own state, comments in JSONC, TOML tables and comments) stays byte for byte. A file that
//! does not parse is refused ([`Error::Malformed`]) and left as it is. Errors name files,
//! places and server names, never a value: the files are full of tokens, and what is shown
//! of an entry goes through [`masked`].

#![deny(missing_docs)]

mod client;
mod entry;
mod error;
mod file;
mod jsonc;
mod mcpx_config;
mod ops;
mod record;
mod secret;
mod toml_file;
mod uninstall;
mod variables;

pub use client::{Client, Format, Os, Places, Scope, Target, CLIENTS};
pub use entry::{gateway_entry, Gateway, GATEWAY_NAME};
pub use error::{Error, Syntax};
pub use file::MAX_FILE_BYTES;
pub use mcpx_config::Outcome;
pub use ops::{
    add_servers, config_variables, document, import, install, servers, status, EntryCheck, Found,
    ImportReport, InstallReport, Request, Status,
};
pub use record::RECORD_FILE;
pub use secret::{literal_secrets, masked, MASK};
pub use uninstall::{uninstall, UninstallReport};
