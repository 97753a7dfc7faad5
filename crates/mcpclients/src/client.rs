//! The clients: where each keeps its servers, per platform and scope, and in what shape.
//!
//! From each client's own documentation (2026):
//!
//! | client | user scope | project scope | servers at | remote entry |
//! |---|---|---|---|---|
//! | claude-desktop | macOS `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows `%APPDATA%\Claude\claude_desktop_config.json`, Linux `~/.config/Claude/…` (no official build) | — | `mcpServers` | none in the file (remote servers are connectors in the app) |
//! | claude-code | `~/.claude.json` | `.mcp.json`; `local`: `~/.claude.json` `projects[DIR].mcpServers` | `mcpServers` | `"type": "http"` or `"sse"`, `url`, `headers` |
//! | cursor | `~/.cursor/mcp.json` | `.cursor/mcp.json` | `mcpServers` | `url`, `headers` |
//! | vscode | the profile's `mcp.json` (`~/.config/Code/User`, `~/Library/Application Support/Code/User`, `%APPDATA%\Code\User`) | `.vscode/mcp.json` | `servers` (+ `inputs`), JSONC | `"type": "http"` or `"sse"`, `url`, `headers` |
//! | windsurf | `~/.codeium/windsurf/mcp_config.json` | — | `mcpServers` | `serverUrl`, `headers` |
//! | codex | `$CODEX_HOME/config.toml`, else `~/.codex/config.toml` | `.codex/config.toml` | `[mcp_servers.NAME]` (TOML) | `url`, `bearer_token_env_var`, `http_headers` |
//! | gemini | `~/.gemini/settings.json` | `.gemini/settings.json` | `mcpServers` | `httpUrl` (Streamable HTTP), `url` (SSE), `headers` |
//! | zed | `~/.config/zed/settings.json` (Linux, macOS), `%APPDATA%\Zed\settings.json` | `.zed/settings.json` | `context_servers`, JSONC | `url`, `headers` |

use std::path::{Path, PathBuf};

use crate::error::Error;

/// A client whose config file mcpx can read and change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Client {
    /// Claude Desktop.
    ClaudeDesktop,
    /// Claude Code.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// Visual Studio Code (Copilot's agent mode).
    Vscode,
    /// Windsurf.
    Windsurf,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Zed.
    Zed,
    /// A plain `{"mcpServers": {...}}` JSON file (`--format mcp-servers`).
    Generic,
}

/// Every client, in the order the help lists them.
pub const CLIENTS: [Client; 8] = [
    Client::ClaudeDesktop,
    Client::ClaudeCode,
    Client::Cursor,
    Client::Vscode,
    Client::Windsurf,
    Client::Codex,
    Client::Gemini,
    Client::Zed,
];

/// Which of a client's config files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own file, for every project.
    User,
    /// The project's file (in the current folder), often shared through version control.
    Project,
    /// Claude Code's entries for one project kept in the user's file.
    Local,
}

impl Scope {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }

    /// The scope called `name`.
    pub fn from_name(name: &str) -> Option<Scope> {
        [Scope::User, Scope::Project, Scope::Local]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON.
    Json,
    /// JSON with comments and trailing commas.
    Jsonc,
    /// TOML.
    Toml,
}

impl Format {
    /// How errors name it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Jsonc => "JSON with comments",
            Format::Toml => "TOML",
        }
    }
}

/// The operating systems whose file locations differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and other Unix.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

/// What locating a file needs from the environment, read by the caller (this crate reads no
/// environment variables).
#[derive(Debug, Clone)]
pub struct Places {
    /// The user's home folder.
    pub home: PathBuf,
    /// The project folder (the current one).
    pub cwd: PathBuf,
    /// Which platform's locations.
    pub os: Os,
    /// `%APPDATA%` on Windows.
    pub appdata: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, when set.
    pub xdg_config_home: Option<PathBuf>,
    /// `$CODEX_HOME`, when set.
    pub codex_home: Option<PathBuf>,
}

impl Client {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Windsurf => "windsurf",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::Zed => "zed",
            Client::Generic => "mcp-servers",
        }
    }

    /// The client (or, with `--format`, the shape) called `name`.
    pub fn from_name(name: &str) -> Result<Client, Error> {
        CLIENTS
            .into_iter()
            .chain([Client::Generic])
            .find(|c| c.name() == name)
            .ok_or_else(|| Error::UnknownClient {
                name: name.to_owned(),
                known: CLIENTS.map(Client::name).join(", "),
            })
    }

    /// How its file is written.
    pub fn format(self) -> Format {
        match self {
            Client::Codex => Format::Toml,
            Client::Vscode | Client::Zed => Format::Jsonc,
            _ => Format::Json,
        }
    }

    /// The scopes it has.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            Client::ClaudeCode => &[Scope::User, Scope::Project, Scope::Local],
            Client::ClaudeDesktop | Client::Windsurf | Client::Generic => &[Scope::User],
            _ => &[Scope::User, Scope::Project],
        }
    }

    /// The member that holds its servers.
    pub(crate) fn servers_key(self) -> &'static str {
        match self {
            Client::Vscode => "servers",
            Client::Zed => "context_servers",
            Client::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }
}

/// One client config file and where in it the servers are.
#[derive(Debug, Clone)]
pub struct Target {
    /// Whose file (and so its shape).
    pub client: Client,
    /// Which of its files.
    pub scope: Scope,
    /// The file.
    pub file: PathBuf,
    /// The member names that lead to the servers object.
    pub at: Vec<String>,
}

impl Target {
    /// The client's file of `scope` on this system.
    pub fn locate(client: Client, scope: Scope, places: &Places) -> Result<Target, Error> {
        if !client.scopes().contains(&scope) {
            return Err(Error::NoSuchScope {
                client: client.name(),
                scope: scope.name(),
                has: client
                    .scopes()
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let home = &places.home;
        let cwd = &places.cwd;
        let appdata = || {
            places.appdata.clone().ok_or_else(|| Error::NoLocation {
                client: client.name(),
                why: "%APPDATA% is not set".into(),
            })
        };
        let config_home = || {
            places
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| home.join(".config"))
        };
        let mut at = vec![client.servers_key().to_owned()];
        let file = match (client, scope) {
            (Client::ClaudeDesktop, _) => match places.os {
                Os::MacOs => {
                    home.join("Library/Application Support/Claude/claude_desktop_config.json")
                }
                Os::Windows => appdata()?.join("Claude").join("claude_desktop_config.json"),
                Os::Linux => config_home().join("Claude/claude_desktop_config.json"),
            },
            (Client::ClaudeCode, Scope::User) => home.join(".claude.json"),
            (Client::ClaudeCode, Scope::Local) => {
                at.insert(0, "projects".into());
                at.insert(1, path_key(cwd));
                home.join(".claude.json")
            }
            (Client::ClaudeCode, _) => cwd.join(".mcp.json"),
            (Client::Cursor, Scope::User) => home.join(".cursor/mcp.json"),
            (Client::Cursor, _) => cwd.join(".cursor/mcp.json"),
            (Client::Vscode, Scope::User) => match places.os {
                Os::MacOs => home.join("Library/Application Support/Code/User/mcp.json"),
                Os::Windows => appdata()?.join("Code").join("User").join("mcp.json"),
                Os::Linux => config_home().join("Code/User/mcp.json"),
            },
            (Client::Vscode, _) => cwd.join(".vscode/mcp.json"),
            (Client::Windsurf, _) => home.join(".codeium/windsurf/mcp_config.json"),
            (Client::Codex, Scope::User) => places
                .codex_home
                .clone()
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
            (Client::Codex, _) => cwd.join(".codex/config.toml"),
            (Client::Gemini, Scope::User) => home.join(".gemini/settings.json"),
            (Client::Gemini, _) => cwd.join(".gemini/settings.json"),
            (Client::Zed, Scope::User) => match places.os {
                Os::Windows => appdata()?.join("Zed").join("settings.json"),
                _ => config_home().join("zed/settings.json"),
            },
            (Client::Zed, _) => cwd.join(".zed/settings.json"),
            (Client::Generic, _) => {
                return Err(Error::NoLocation {
                    client: client.name(),
                    why: "it has no file of its own: pass --file".into(),
                })
            }
        };
        Ok(Target {
            client,
            scope,
            file,
            at,
        })
    }

    /// A file given on the command line, shaped as `client`'s.
    pub fn file(client: Client, file: &Path) -> Target {
        Target {
            client,
            scope: Scope::User,
            file: file.to_path_buf(),
            at: vec![client.servers_key().to_owned()],
        }
    }

    /// The JSON path of the servers object, as errors and reports print it.
    pub fn servers_path(&self) -> String {
        crate::error::json_path(&self.at)
    }
}

/// A folder as Claude Code keys its projects: the path as text, with `/` on every platform.
fn path_key(dir: &Path) -> String {
    dir.display().to_string().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(os: Os) -> Places {
        Places {
            home: PathBuf::from("/h"),
            cwd: PathBuf::from("/p"),
            os,
            appdata: Some(PathBuf::from("/h/AppData/Roaming")),
            xdg_config_home: None,
            codex_home: None,
        }
    }

    #[test]
    fn every_client_has_a_user_file_on_every_platform() {
        for os in [Os::Linux, Os::MacOs, Os::Windows] {
            for client in CLIENTS {
                let target = Target::locate(client, Scope::User, &places(os)).unwrap();
                assert!(target.file.starts_with("/h"), "{client:?} {os:?}");
            }
        }
        let local = Target::locate(Client::ClaudeCode, Scope::Local, &places(Os::Linux)).unwrap();
        assert_eq!(local.file, PathBuf::from("/h/.claude.json"));
        assert_eq!(local.servers_path(), "$.projects[\"/p\"].mcpServers");
        let err = Target::locate(Client::Windsurf, Scope::Project, &places(Os::Linux)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "windsurf has no project scope: it has user"
        );
        let err = Client::from_name("emacs").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown client 'emacs': want one of claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, zed"
        );
    }
}
