//! Variables in a client's entry, translated into mcpx's `${VAR}` (and `${VAR:-default}`) only
//! where the client itself expands them, so that mcpx reads each value as the client did.
//!
//! From each client's documentation:
//!
//! | client | expands | where |
//! |---|---|---|
//! | claude-code | `${VAR}`, `${VAR:-default}` | command, args, env, url, headers |
//! | gemini | `$VAR`, `${VAR}` | every string of `settings.json` |
//! | vscode | `${env:VAR}`, `${input:ID}`, `${workspaceFolder}`, `${userHome}`, `${config:…}`, `${pathSeparator}`, `${/}`, … | command, args, env, url, headers, cwd |
//! | cursor | `${env:VAR}`, `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`, `${pathSeparator}`, `${/}` | command, args, env, url, headers |
//! | windsurf | `${env:VAR}`, `${file:PATH}` | command, args, env, serverUrl, url, headers |
//! | claude-desktop, codex, zed | nothing: a `${` is passed as written | |
//!
//! What mcpx cannot honour makes the entry stay in the client's file, with a note saying why
//! (by name, never a value): a VS Code input (mcpx cannot ask), `${config:…}`, `${file:…}`, a
//! folder variable in a user-scope file (the client sets it to the folder open in it; mcpx
//! serves every folder), and a `${` the client passes as written (mcpx would read it as a
//! variable). A plain `{"mcpServers": …}` file (`--format mcp-servers`) is read in mcpx's own
//! syntax.

use std::path::PathBuf;

use crate::client::{Client, Os};

/// How a client writes variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    /// `${VAR}` and `${VAR:-default}`, as mcpx.
    Shell,
    /// `$VAR` and `${VAR}`.
    Gemini,
    /// VS Code's and Cursor's `${env:VAR}`, `${workspaceFolder}`, ….
    Editor,
    /// Windsurf's `${env:VAR}` and `${file:PATH}`.
    Windsurf,
    /// None: every `$` is itself.
    Literal,
}

impl Syntax {
    fn of(client: Client) -> Syntax {
        match client {
            Client::ClaudeCode | Client::Generic => Syntax::Shell,
            Client::Gemini => Syntax::Gemini,
            Client::Vscode | Client::Cursor => Syntax::Editor,
            Client::Windsurf => Syntax::Windsurf,
            _ => Syntax::Literal,
        }
    }
}

/// What translating needs besides the text.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) client: Client,
    /// The project folder, for `${workspaceFolder}`; `None` for a user-scope file, where the
    /// client sets it to whatever folder is open in it.
    pub(crate) project: Option<PathBuf>,
    /// The user's home folder, for `${userHome}` in a project's file.
    pub(crate) home: PathBuf,
    pub(crate) os: Os,
}

/// `text` in mcpx's syntax, or why mcpx cannot read it as the client does.
pub(crate) fn translate(text: &str, context: &Context) -> Result<String, String> {
    let syntax = Syntax::of(context.client);
    let client = context.client.name();
    let as_written = || {
        format!("a value holds `${{`, which {client} passes as written and mcpx would read as a variable")
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(body) = after.strip_prefix('{') else {
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let named = after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
            if syntax == Syntax::Gemini && named {
                out.push_str(&format!("${{{}}}", &after[..name_len]));
                rest = &after[name_len..];
            } else {
                out.push('$');
                rest = after;
            }
            continue;
        };
        let Some(end) = body.find('}') else {
            return Err(as_written());
        };
        let inner = &body[..end];
        rest = &body[end + 1..];
        out.push_str(&variable(inner, syntax, context).map_err(|why| {
            if why.is_empty() {
                as_written()
            } else {
                why
            }
        })?);
    }
    out.push_str(rest);
    Ok(out)
}

/// One `${INNER}` in mcpx's syntax; `Err("")` when the client passes it as written.
fn variable(inner: &str, syntax: Syntax, context: &Context) -> Result<String, String> {
    let client = context.client.name();
    let plain_name = |name: &str| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    };
    let reference = |name: &str| {
        if plain_name(name) {
            Ok(format!("${{{name}}}"))
        } else {
            Err(String::new())
        }
    };
    match syntax {
        Syntax::Literal => Err(String::new()),
        Syntax::Shell => match inner.split_once(":-") {
            Some((name, default)) if plain_name(name) && !default.contains("${") => {
                Ok(format!("${{{inner}}}"))
            }
            Some(_) => Err(String::new()),
            None => reference(inner),
        },
        Syntax::Gemini => reference(inner),
        Syntax::Windsurf => match inner.split_once(':') {
            Some(("env", name)) => reference(name),
            Some(("file", _)) => Err(format!(
                "it reads a file with ${{file:…}} when {client} starts it; mcpx does not: left in {client}"
            )),
            _ => Err(String::new()),
        },
        Syntax::Editor => {
            let separator = if context.os == Os::Windows { "\\" } else { "/" };
            let folder = |name: &str| match &context.project {
                Some(project) if name == "workspaceFolder" => Ok(project.display().to_string()),
                Some(project) => Ok(project
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()),
                None => Err(format!(
                    "it uses ${{{name}}}, which {client} sets to the folder open in it; mcpx serves every folder: left in {client}"
                )),
            };
            match inner.split_once(':') {
                Some(("env", name)) => reference(name),
                Some(("input", id)) => Err(format!(
                    "{client} asks for input '{id}' when it starts the server; mcpx cannot ask: left in {client}"
                )),
                Some((kind, _)) => Err(format!(
                    "it uses ${{{kind}:…}}, which only {client} can resolve: left in {client}"
                )),
                None => match inner {
                    "pathSeparator" | "/" => Ok(separator.to_owned()),
                    "workspaceFolder" | "workspaceFolderBasename" => folder(inner),
                    // The same user's home; but a user-scope file is the client's own, so
                    // its entry stays there, as with the folders.
                    "userHome" => folder(inner).map(|_| context.home.display().to_string()),
                    _ => Err(format!(
                        "it uses ${{{inner}}}, which only {client} can resolve: left in {client}"
                    )),
                },
            }
        }
    }
}

/// The variables an mcpx value refers to: `(name, has a default)`, in order, each once.
pub(crate) fn references(text: &str) -> Vec<(String, bool)> {
    let mut names: Vec<(String, bool)> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let (name, default) = match after[..end].split_once(":-") {
            Some((name, _)) => (name, true),
            None => (&after[..end], false),
        };
        if !names.iter().any(|(n, _)| n == name) {
            names.push((name.to_owned(), default));
        }
        rest = &after[end + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(client: Client, project: bool) -> Context {
        Context {
            client,
            project: project.then(|| PathBuf::from("/p/app")),
            home: PathBuf::from("/h"),
            os: Os::Linux,
        }
    }

    #[test]
    fn each_client_in_its_own_syntax() {
        let cases: &[(Client, bool, &str, Result<&str, &str>)] = &[
            (
                Client::ClaudeCode,
                false,
                "Bearer ${T:-none} $HOME",
                Ok("Bearer ${T:-none} $HOME"),
            ),
            (Client::ClaudeCode, false, "${T", Err("passes as written")),
            (
                Client::Gemini,
                false,
                "$A/${B} a$1 $",
                Ok("${A}/${B} a$1 $"),
            ),
            (Client::Gemini, false, "${A:-x}", Err("passes as written")),
            (Client::Cursor, false, "${env:K}${/}x", Ok("${K}/x")),
            (
                Client::Cursor,
                false,
                "${workspaceFolder}/s.py",
                Err("sets to the folder open in it"),
            ),
            (
                Client::Cursor,
                true,
                "${workspaceFolder}/${workspaceFolderBasename}",
                Ok("/p/app/app"),
            ),
            (
                Client::Vscode,
                true,
                "${input:api-key}",
                Err("asks for input 'api-key'"),
            ),
            (Client::Vscode, true, "${config:x.y}", Err("${config:…}")),
            (Client::Vscode, false, "${userHome}/x", Err("${userHome}")),
            (Client::Vscode, true, "${userHome}/x", Ok("/h/x")),
            (
                Client::Vscode,
                true,
                "${unknown}",
                Err("only vscode can resolve"),
            ),
            (
                Client::Windsurf,
                false,
                "Bearer ${env:T}",
                Ok("Bearer ${T}"),
            ),
            (Client::Windsurf, false, "${file:/run/t}", Err("${file:…}")),
            (
                Client::ClaudeDesktop,
                false,
                "sh -c 'echo ${TOKEN}'",
                Err("claude-desktop passes as written"),
            ),
            (Client::Codex, false, "plain $ value", Ok("plain $ value")),
        ];
        for (client, project, text, want) in cases {
            let got = translate(text, &context(*client, *project));
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(got, *want, "{client:?} {text}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{client:?} {text}: {got}"),
                (got, want) => panic!("{client:?} {text}: {got:?}, want {want:?}"),
            }
        }
        assert_eq!(
            references("Bearer ${A} ${B:-x} ${A}"),
            [("A".to_owned(), false), ("B".to_owned(), true)]
        );
    }
}
