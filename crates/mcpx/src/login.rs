//! OAuth for the command line: where tokens are kept, whether a person can be asked to log
//! in, how the login URL reaches them, and the hint a needed login prints.
//!
//! A login starts when a server asks and a person is there: stdin and stderr are a terminal,
//! or `--login` was given. Then the URL is printed to stderr always and opened with $BROWSER,
//! else the system's opener where there is a display. Without a person, a needed login fails
//! the command (exit 2) with the line that says which `mcpx auth login` to run.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use anstream::eprintln;
use mcpauth::{AuthError, Authorizer, FileStore, Interaction, KeyringStore, Store};
use mcpclient::Reach;
use mcpclient::{AuthFailure, AuthHeader, AuthTarget, BoxFuture, HttpAuth, Refusal};
use mcpx::config::Server;
use mcpx::places::Places;

/// `--login`: log in when asked even without a terminal.
static LOGIN_ANYWHERE: OnceLock<bool> = OnceLock::new();

/// Records `--login`.
pub(crate) fn allow_login_anywhere(allowed: bool) {
    let _ = LOGIN_ANYWHERE.set(allowed);
}

/// The credential store: the file MCPX_CREDENTIALS names, else the OS keyring when it
/// answers, else `credentials.json` in the user's config folder ([`mcpx::places`]).
pub(crate) fn store() -> anyhow::Result<Arc<dyn Store>> {
    static STORE: OnceLock<Arc<dyn Store>> = OnceLock::new();
    if let Some(store) = STORE.get() {
        return Ok(store.clone());
    }
    let store: Arc<dyn Store> = match std::env::var_os("MCPX_CREDENTIALS") {
        Some(path) => Arc::new(FileStore::new(PathBuf::from(path))),
        None => match KeyringStore::available() {
            Some(keyring) => Arc::new(keyring),
            None => {
                let file = Places::here().credentials_file().ok_or_else(|| {
                    anyhow::anyhow!("no keyring, and no per-user config folder (XDG_CONFIG_HOME or HOME; APPDATA on Windows): set MCPX_CREDENTIALS=FILE")
                })?;
                Arc::new(FileStore::new(file))
            }
        },
    };
    Ok(STORE.get_or_init(|| store).clone())
}

/// Whether a person can be asked now.
fn interactive() -> bool {
    use std::io::IsTerminal;
    LOGIN_ANYWHERE.get().copied().unwrap_or(false)
        || (std::io::stdin().is_terminal() && std::io::stderr().is_terminal())
}

/// Prints the login URL and opens it: with $BROWSER when set, else the system's opener where
/// there is a display. Never waits for the browser.
fn show(url: &str) {
    eprintln!("mcpx: to log in, open this URL in a browser:\n  {url}");
    let opener = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => Some(browser),
        _ if cfg!(target_os = "macos") => Some("open".to_owned()),
        _ if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            Some("xdg-open".to_owned())
        }
        _ => None,
    };
    let Some(opener) = opener else { return };
    let mut words = opener.split_whitespace();
    let Some(program) = words.next() else { return };
    let started = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!("mcpx: cannot start the browser `{program}`: {e}");
    }
}

/// The OAuth client of `server` with `interaction`, for an HTTP server that has no
/// `Authorization` header of its own in the config; `None` otherwise.
pub(crate) fn authorizer(
    server: &Server,
    interaction: Interaction,
) -> anyhow::Result<Option<Arc<Authorizer>>> {
    let Reach::Http(http) = &server.transport else {
        return Ok(None);
    };
    if has_authorization(http) {
        return Ok(None);
    }
    let authorizer = Authorizer::new(&http.url, server.auth.clone(), store()?, interaction)?;
    Ok(Some(Arc::new(authorizer)))
}

/// The login interaction of the command line: the browser, for `mcpx auth login`.
pub(crate) fn browser() -> Interaction {
    Interaction::Browser(Arc::new(show))
}

/// How `server` is reached during a command: for an HTTP server, its requests authorized by
/// its OAuth client, which logs in through the browser when a person can be asked.
pub(crate) fn reach(server: &Server) -> anyhow::Result<Reach> {
    let interaction = if interactive() {
        browser()
    } else {
        Interaction::Never
    };
    with_auth(server, interaction)
}

/// How the gateway reaches `server`: with its stored (or client-credentials) tokens, never a
/// login; a server that needs one fails to start with the line naming `mcpx auth login`.
pub(crate) fn upstream_reach(server: &Server) -> anyhow::Result<Reach> {
    with_auth(server, Interaction::Never)
}

/// How much longer than its `startupTimeout` connecting to `server` may take: the time a
/// person has to log in, when one can be asked and the server may need it.
pub(crate) fn allowance(server: &Server) -> std::time::Duration {
    let oauth = matches!(&server.transport, Reach::Http(http) if !has_authorization(http));
    if oauth && interactive() {
        mcpauth::LOGIN_TIMEOUT
    } else {
        std::time::Duration::ZERO
    }
}

fn has_authorization(http: &mcpclient::HttpConfig) -> bool {
    http.headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
}

fn with_auth(server: &Server, interaction: Interaction) -> anyhow::Result<Reach> {
    let mut reach = server.transport.clone();
    if let (Reach::Http(http), Some(inner)) = (&mut reach, authorizer(server, interaction)?) {
        http.auth = Some(Arc::new(Hinted {
            inner,
            server: server.name.clone(),
        }));
    }
    Ok(reach)
}

/// An authorizer whose "login needed" names the command that logs in.
struct Hinted {
    inner: Arc<Authorizer>,
    server: String,
}

/// The servers that asked for a login none could give during this run.
static NEEDS_LOGIN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Whether `server` asked for a login that could not be given during this run.
pub(crate) fn needs_login(server: &str) -> bool {
    NEEDS_LOGIN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(server)
}

impl Hinted {
    fn hint(&self, error: AuthFailure) -> AuthFailure {
        match error.downcast_ref::<AuthError>() {
            Some(AuthError::LoginRequired { .. }) => {
                NEEDS_LOGIN
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(self.server.clone());
                format!(
                    "{error}; run `mcpx auth login {}` (or give --login)",
                    self.server
                )
                .into()
            }
            _ => error,
        }
    }
}

impl HttpAuth for Hinted {
    fn header<'a>(
        &'a self,
        target: AuthTarget<'a>,
    ) -> BoxFuture<'a, Result<Option<AuthHeader>, AuthFailure>> {
        Box::pin(async move { self.inner.header(target).await.map_err(|e| self.hint(e)) })
    }

    fn refused<'a>(&'a self, refusal: Refusal<'a>) -> BoxFuture<'a, Result<bool, AuthFailure>> {
        Box::pin(async move { self.inner.refused(refusal).await.map_err(|e| self.hint(e)) })
    }
}
