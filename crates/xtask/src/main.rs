//! `cargo xtask`: what is generated from mcpx's command-line definitions (`mcpx::cli`), so
//! that none of it is written by hand or drifts from the binary; a command added to the CLI
//! appears in all three without an edit here.
//!
//! - `man DIR`: a man page per command (`mcpx.1`, `mcpx-serve.1`, `mcpx-auth-login.1`, …),
//!   by clap_mangen, for the Debian package (`scripts/package`).
//! - `completions DIR`: the completion scripts for bash, zsh, fish, PowerShell and Elvish,
//!   the same `mcpx completions SHELL` prints.
//! - `cli-reference FILE`: the manual's CLI reference (`docs/src/reference/cli.md`): every
//!   command's `--help`. With `--check`, fails when FILE differs from what would be written
//!   (the test below does the same in `scripts/test`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap_complete::Shell;

const USAGE: &str = "usage: cargo xtask man DIR | completions DIR | cli-reference [--check] FILE";

/// The width help text is wrapped at in the CLI reference, whatever the terminal: the file
/// must come out the same on every machine.
const HELP_WIDTH: usize = 100;

/// What the CLI reference starts with.
const REFERENCE_HEADER: &str = "\
# CLI reference

<!-- Generated from mcpx's clap definitions by `cargo xtask cli-reference docs/src/reference/cli.md`.
     Do not edit: crates/xtask's test fails when this file differs from what it generates. -->

Every command's `--help`, exactly as `mcpx` prints it. The same definitions make the man pages
(`man mcpx`, `man mcpx-serve`, … in the Debian package) and the shell completions (`mcpx
completions SHELL`). Exit codes, for every command: 0 success, 1 the answer is no, 2 mcpx could not
do its job (the table is at the end of `mcpx --help`).
";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> anyhow::Result<()> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["man", dir] => man(Path::new(dir)),
        ["completions", dir] => completions(Path::new(dir)),
        ["cli-reference", file] => {
            let file = Path::new(file);
            std::fs::write(file, cli_reference())
                .with_context(|| format!("cannot write {}", file.display()))
        }
        ["cli-reference", "--check", file] => {
            let file = Path::new(file);
            let have = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            if have != cli_reference() {
                bail!(
                    "{} is out of date: run `cargo xtask cli-reference {}`",
                    file.display(),
                    file.display()
                );
            }
            Ok(())
        }
        _ => bail!("{USAGE}"),
    }
}

/// Writes a man page per command into `dir`.
fn man(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    clap_mangen::generate_to(mcpx::cli::command(), dir)
        .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
    println!("man pages in {}", dir.display());
    Ok(())
}

/// Writes each shell's completion script into `dir`, under the name that shell looks for.
fn completions(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::PowerShell,
        Shell::Elvish,
    ] {
        let path = clap_complete::generate_to(shell, &mut mcpx::cli::command(), "mcpx", dir)
            .with_context(|| format!("cannot write the {shell} completions"))?;
        println!("{}", path.display());
    }
    Ok(())
}

/// The manual's CLI reference: every visible command's help, in tree order.
fn cli_reference() -> String {
    let mut command = mcpx::cli::command().term_width(HELP_WIDTH);
    command.build();
    let mut text = String::from(REFERENCE_HEADER);
    section(&mut text, &mut command, "mcpx");
    text
}

/// Appends `command`'s help (as `name`) and its subcommands'.
fn section(text: &mut String, command: &mut clap::Command, name: &str) {
    let help = command.render_help().to_string();
    let lines: Vec<&str> = help.trim_end().lines().map(str::trim_end).collect();
    text.push_str(&format!(
        "\n## `{name}`\n\n```text\n{}\n```\n",
        lines.join("\n")
    ));
    for sub in command.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let sub_name = format!("{name} {}", sub.get_name());
        section(text, sub, &sub_name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_reference_is_what_the_definitions_say() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference/cli.md");
        let have = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            have == cli_reference(),
            "docs/src/reference/cli.md is out of date: run `cargo xtask cli-reference docs/src/reference/cli.md`"
        );
    }

    #[test]
    fn every_command_has_a_man_page_and_completions() {
        let dir = tempfile::tempdir().unwrap();
        man(dir.path()).unwrap();
        for page in [
            "mcpx.1",
            "mcpx-serve.1",
            "mcpx-auth-login.1",
            "mcpx-completions.1",
        ] {
            let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
            assert!(text.starts_with(".ie"), "{page}: {text}");
        }
        completions(dir.path()).unwrap();
        for script in ["mcpx.bash", "_mcpx", "mcpx.fish", "_mcpx.ps1", "mcpx.elv"] {
            let text = std::fs::read_to_string(dir.path().join(script)).unwrap();
            assert!(text.contains("serve"), "{script}");
        }
    }
}
