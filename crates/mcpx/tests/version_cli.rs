//! `mcpx --version` and `mcpx completions SHELL`, through the real binary.

use assert_cmd::Command;

/// Runs mcpx with `args`: its exit code, stdout and stderr.
fn mcpx(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("mcpx")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_version_names_the_commit_and_the_protocol_versions() {
    let (code, out, _) = mcpx(&["--version"]);
    assert_eq!(code, 0);
    let mut lines = out.lines();
    let first = lines.next().unwrap();
    assert!(
        first.starts_with(&format!("mcpx {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    // Built from this repository, so the commit is known.
    assert!(!first.contains("commit unknown"), "{out}");
    let served = mcpgateway::supported_versions().join(", ");
    assert_eq!(
        lines.next(),
        Some(format!("MCP versions served (mcpx serve): {served}").as_str())
    );
    let spoken = mcpclient::SUPPORTED_VERSIONS.join(", ");
    assert_eq!(
        lines.next(),
        Some(format!("MCP versions spoken to servers: {spoken}").as_str())
    );
    let (code, short, _) = mcpx(&["-V"]);
    assert_eq!((code, short.trim()), (0, first));
}

#[test]
fn completions_for_each_shell_and_a_clear_refusal_for_others() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef mcpx"),
        ("fish", "complete -c mcpx"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[mcpx]"),
    ] {
        let (code, out, err) = mcpx(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(marker), "{shell}");
        assert!(out.contains("serve"), "{shell}: every command completes");
    }
    let (code, _, err) = mcpx(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}
