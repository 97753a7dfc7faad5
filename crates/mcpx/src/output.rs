//! Writing results to standard output; a closed pipe ends the program quietly.

use std::io::{self, Write};

/// Writes text to standard output.
pub(crate) fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Whether an error is a closed standard output (`mcpx … | head`), which is success.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Colours for messages on stderr; `anstream` drops them when stderr is not a terminal or
/// `NO_COLOR` is set.
pub(crate) mod style {
    use anstyle::{AnsiColor, Style};

    fn paint(style: Style, text: &str) -> String {
        format!("{style}{text}{style:#}")
    }

    /// An error's prefix.
    pub(crate) fn error(text: &str) -> String {
        paint(
            Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
            text,
        )
    }

    /// A warning's prefix.
    pub(crate) fn warning(text: &str) -> String {
        paint(
            Style::new().bold().fg_color(Some(AnsiColor::Yellow.into())),
            text,
        )
    }
}
