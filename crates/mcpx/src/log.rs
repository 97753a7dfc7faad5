//! What mcpx logs on standard error, for every command: warnings by default (a server taken for
//! a legacy one, a failed listing), and for `serve` what it does too (`info`). `-q` leaves
//! errors only; each `-v` makes mcpx's own crates say a level more, never the libraries under
//! them (their detail is large, and may show what a request carried); `MCPX_LOG` (an
//! `EnvFilter`, e.g. `debug` or `mcpclient=trace`) overrides both. Standard output never
//! carries the log: it is the command's answer, or the protocol on `serve`'s stdio front.

use std::borrow::Cow;
use std::sync::{LazyLock, Mutex};

use indicatif::MultiProgress;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// The environment variable whose filter, when set, is the log's, whatever `-q` and `-v` say.
pub(crate) const LOG_ENV: &str = "MCPX_LOG";

/// mcpx's own crates, by their log target: what `-v` makes say more.
const OWN_CRATES: [&str; 9] = [
    "mcpx",
    "mcpclient",
    "mcpgateway",
    "mcpauth",
    "mcpx_fixture",
    "schemaval",
    "toolcompat",
    "toolpin",
    "toolsearch",
];

/// How much the log says, as `-q` and `-v` asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Verbosity {
    /// `-q`: errors only.
    pub(crate) quiet: bool,
    /// How many `-v`.
    pub(crate) verbose: u8,
}

impl Verbosity {
    /// The log's filter for a command that logs at `default` unless told otherwise: `MCPX_LOG`
    /// when it is set and reads as a filter, else what `-q` and `-v` say.
    pub(crate) fn filter(self, default: LevelFilter) -> EnvFilter {
        EnvFilter::try_from_env(LOG_ENV)
            .unwrap_or_else(|_| EnvFilter::new(self.directives(default)))
    }

    /// [`Verbosity::filter`] for a command of the command line: warnings, but those about
    /// tool schemas only with `-v`, the commands reporting them their own way (`lint`'s
    /// problems, `tools`' marks, `servers`' counts, `call`'s error for such a tool).
    fn commands_filter(self) -> EnvFilter {
        let mut filter = self.filter(LevelFilter::WARN);
        if self.verbose == 0 && std::env::var_os(LOG_ENV).is_none() {
            if let Ok(schemas) = format!("{}=error", mcpclient::SCHEMA_LOG_TARGET).parse() {
                filter = filter.add_directive(schemas);
            }
        }
        filter
    }

    /// The filter's directives without `MCPX_LOG`.
    fn directives(self, default: LevelFilter) -> String {
        let name = |level: LevelFilter| level.to_string().to_ascii_lowercase();
        if self.quiet {
            return name(LevelFilter::ERROR);
        }
        let own = more(default, self.verbose);
        let mut directives = vec![name(default)];
        if own != default {
            let own = name(own);
            directives.extend(OWN_CRATES.iter().map(|target| format!("{target}={own}")));
        }
        directives.join(",")
    }
}

/// `level` raised by `steps` (a level more each), at most to `trace`.
fn more(level: LevelFilter, steps: u8) -> LevelFilter {
    const LEVELS: [LevelFilter; 6] = [
        LevelFilter::OFF,
        LevelFilter::ERROR,
        LevelFilter::WARN,
        LevelFilter::INFO,
        LevelFilter::DEBUG,
        LevelFilter::TRACE,
    ];
    let at = LEVELS.iter().position(|l| *l == level).unwrap_or(0);
    LEVELS[(at + usize::from(steps)).min(LEVELS.len() - 1)]
}

/// Logs to standard error for every command but `serve` (whose log goes through a queue of its
/// own, [`crate::stderr_log`]): each message a line as the command's own warnings are,
/// `mcpx: warning: server{name=demo}: what happened key=value`, written as it comes.
pub(crate) fn commands_to_stderr(verbosity: Verbosity) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(verbosity.commands_filter())
        .with_writer(|| Line(Vec::new()))
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .event_format(CommandLine)
        .try_init();
}

/// The secrets of the config a command loaded (the values of its `${VAR}`s, its `auth`
/// section's): kept out of the command's log lines, its error and its server report, in every
/// spelling ([`mcpgateway::Redactor`]). A server that fails may quote them (its arguments, its
/// environment) on its stderr, which mcpx shows.
static SECRETS: LazyLock<mcpgateway::Redactor> = LazyLock::new(mcpgateway::Redactor::default);

/// Keeps `secrets` out of what the command writes from now on.
pub(crate) fn keep_out(secrets: Vec<String>) {
    SECRETS.add(secrets);
}

/// `text` as the command may show it: without a secret of its config.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    SECRETS.redact(text)
}

/// The status lines being drawn on the terminal while servers start ([`crate::fleet`]): a log
/// line is written while they are cleared, so that neither garbles the other.
static STATUS_LINES: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Says which status lines are being drawn (`None`: none any more).
pub(crate) fn status_lines(lines: Option<MultiProgress>) {
    *STATUS_LINES.lock().unwrap_or_else(|p| p.into_inner()) = lines;
}

/// One log line of a command being formatted; written to standard error whole, when done.
struct Line(Vec<u8>);

impl std::io::Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        use std::io::Write;
        let text = String::from_utf8_lossy(&self.0);
        let text = shown(&text);
        let write = || {
            // Nowhere left to say that standard error is gone.
            let _ = std::io::stderr().write_all(text.as_bytes());
        };
        let drawing = STATUS_LINES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match drawing {
            Some(lines) => lines.suspend(write),
            None => write(),
        }
    }
}

/// A log line of a command: `mcpx: LEVEL: ` (the level coloured on a terminal), the spans it
/// happened in, the message and its fields.
struct CommandLine;

impl<S, N> FormatEvent<S, N> for CommandLine
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => crate::output::style::error("error"),
            tracing::Level::WARN => crate::output::style::warning("warning"),
            tracing::Level::INFO => "info".to_owned(),
            tracing::Level::DEBUG => "debug".to_owned(),
            tracing::Level::TRACE => "trace".to_owned(),
        };
        let level = if writer.has_ansi_escapes() {
            level
        } else {
            anstream::adapter::strip_str(&level).to_string()
        };
        write!(writer, "mcpx: {level}: ")?;
        for span in context
            .event_scope()
            .into_iter()
            .flat_map(|s| s.from_root())
        {
            write!(writer, "{}", span.name())?;
            let extensions = span.extensions();
            match extensions.get::<FormattedFields<N>>() {
                Some(fields) if !fields.is_empty() => write!(writer, "{{{fields}}}: ")?,
                _ => write!(writer, ": ")?,
            }
        }
        context
            .field_format()
            .format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directives(quiet: bool, verbose: u8, default: LevelFilter) -> String {
        Verbosity { quiet, verbose }.directives(default)
    }

    #[test]
    fn warnings_by_default_errors_when_quiet_and_more_of_our_own_crates_when_verbose() {
        assert_eq!(directives(false, 0, LevelFilter::WARN), "warn");
        assert_eq!(directives(true, 0, LevelFilter::WARN), "error");
        assert_eq!(directives(true, 0, LevelFilter::INFO), "error");
        let verbose = directives(false, 1, LevelFilter::WARN);
        assert!(
            verbose.starts_with("warn,mcpx=info,mcpclient=info,"),
            "{verbose}"
        );
        assert!(!verbose.contains("hyper"), "{verbose}");
        let very = directives(false, 2, LevelFilter::INFO);
        assert!(very.starts_with("info,mcpx=trace,"), "{very}");
        assert!(directives(false, 9, LevelFilter::WARN).contains("mcpgateway=trace"));
    }
}
