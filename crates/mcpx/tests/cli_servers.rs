//! The command line on servers like the ones found in the wild, through the real binary:
//! `key=value` typed through `anyOf`/`oneOf`/`$ref`, the argument table's resolved types, many
//! servers where some fail (each reported, with its stderr), `startupTimeout`.
//!
//! The schemas come from a scripted server: a POSIX shell loop that answers `initialize`, lists
//! the tools of a JSON file and answers each call with the call's own request as text, so a
//! test sees exactly what mcpx sent.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

mod common;
use common::run;

/// The scripted server: `sh SCRIPT TOOLS_FILE`. mcpx numbers its requests and writes `id`
/// second, so the id is read from the start of the line.
const SCRIPTED_SERVER: &str = r#"tools=$(cat "$1")
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p')
  case $line in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}\n' "$id";;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}\n' "$id" "$tools";;
    *'"method":"tools/call"'*)
      text=$(printf '%s' "$line" | sed 's/\\/\\\\/g; s/"/\\"/g')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$id" "$text";;
    *'"method":"notifications/'*) ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id";;
  esac
done
"#;

/// A server that dies at start, saying why on stderr as a Python server would.
const DYING_SERVER: &str = r#"echo 'Traceback (most recent call last):' >&2
echo '  File "server.py", line 3, in <module>' >&2
echo 'ModuleNotFoundError: No module named docker' >&2
exit 1
"#;

/// The tools of the scripted server: schemas as pydantic, zod and people write them.
fn tools() -> Value {
    json!([{
        "name": "search",
        "description": "Searches, with schemas as pydantic writes them.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
                "max_count": {"type": "integer", "default": 10},
                "color": {"anyOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}], "default": null},
                "level": {"oneOf": [{"const": 1, "title": "low"}, {"const": 2, "title": "high"}]},
                "ratio": {"$ref": "#/$defs/Ratio"},
                "id": {"type": ["string", "integer"]},
                "exact": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["query"],
            "additionalProperties": false,
            "$defs": {
                "Color": {"type": "string", "enum": ["red", "green", "blue"], "title": "Color"},
                "Ratio": {"type": "number", "minimum": 0, "maximum": 1}
            }
        }
    }])
}

/// A config in `dir` with the scripted server as `scripted` and `extra` servers (JSON members).
fn config(dir: &Path, extra: &str) -> PathBuf {
    let script = dir.join("scripted.sh");
    std::fs::write(&script, SCRIPTED_SERVER).unwrap();
    let tools_file = dir.join("tools.json");
    std::fs::write(&tools_file, tools().to_string()).unwrap();
    let scripted = json!({"command": "sh", "args": [script, tools_file]});
    let path = dir.join("mcpx.json");
    std::fs::write(
        &path,
        format!(r#"{{"mcpServers": {{"scripted": {scripted}{extra}}}}}"#),
    )
    .unwrap();
    path
}

/// The arguments the scripted server received for a `search` call with `words`.
fn sent(config: &Path, words: &[&str]) -> Value {
    let args: Vec<&str> = ["call", "scripted", "search", "query=q"]
        .iter()
        .chain(words)
        .copied()
        .collect();
    let (out, _) = run(config, &args, 0);
    let request: Value = serde_json::from_str(&out).unwrap();
    let mut arguments = request["params"]["arguments"].clone();
    arguments.as_object_mut().unwrap().remove("query");
    arguments
}

#[test]
#[cfg_attr(windows, ignore = "its scripted server is an `sh` script")]
fn key_value_words_are_typed_through_any_of_one_of_and_refs() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "");
    let cases = [
        ("limit=5", json!({"limit": 5})),
        ("limit=null", json!({"limit": null})),
        ("color=red", json!({"color": "red"})),
        ("level=2", json!({"level": 2})),
        ("ratio=0.5", json!({"ratio": 0.5})),
        ("exact=true", json!({"exact": true})),
        ("tags=[\"a\",\"b\"]", json!({"tags": ["a", "b"]})),
        // Where a string and an integer are both valid, the integer is sent ...
        ("id=5", json!({"id": 5})),
        ("id=five", json!({"id": "five"})),
        // ... and key:=JSON says exactly what is meant.
        ("id:=\"5\"", json!({"id": "5"})),
    ];
    for (word, want) in cases {
        assert_eq!(sent(&config, &[word]), want, "{word}");
    }
}

#[test]
#[cfg_attr(windows, ignore = "its scripted server is an `sh` script")]
fn a_word_no_reading_of_which_is_valid_is_reported_as_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "");
    let rejected = [
        ("max_count=1.5", "$.max_count: got number, want integer"),
        ("max_count=ten", "$.max_count: got string, want integer"),
        ("ratio=2", "$.ratio: maximum: got 2, want 1"),
        (
            "color=purple",
            "$.color: anyOf: matches none of 2 alternatives",
        ),
    ];
    for (word, line) in rejected {
        let (out, text) = run(&config, &["call", "scripted", "search", "query=q", word], 1);
        assert_eq!(out, "");
        assert!(
            text.starts_with("mcpx: arguments rejected before sending")
                && text.contains(&format!("  {line}")),
            "{word}: {text}"
        );
    }
}

#[test]
#[cfg_attr(windows, ignore = "its scripted server is an `sh` script")]
fn the_table_shows_resolved_types_and_enum_values() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "");
    let (out, _) = run(&config, &["tools", "scripted", "search"], 0);
    insta::assert_snapshot!(out, @r"
    search: Searches, with schemas as pydantic writes them.

    ARGUMENT   TYPE                                   REQUIRED  DEFAULT  DESCRIPTION
    query      string                                 yes                What to look for
    limit      integer | null                         no        null
    max_count  integer                                no        10
    color      Color (enum: red, green, blue) | null  no        null
    level      enum: 1, 2                             no
    ratio      Ratio (number)                         no
    id         string | integer                       no
    exact      boolean                                no
    tags       array of string                        no
    ");
}

/// A config with the scripted server, one that dies at start, one that is not there, and one
/// that never answers (given a short `startupTimeout`).
fn config_with_failures(dir: &Path) -> PathBuf {
    let dying = dir.join("dying.sh");
    std::fs::write(&dying, DYING_SERVER).unwrap();
    let extra = format!(
        r#", "dying": {}, "gone": {{"command": "/nonexistent/mcp-server"}},
            "silent": {{"command": "sleep", "args": ["30"], "startupTimeout": 0.5}}"#,
        json!({"command": "sh", "args": [dying]})
    );
    config(dir, &extra)
}

#[test]
#[cfg_attr(windows, ignore = "one of its servers is `sleep`")]
fn every_server_is_reported_when_some_fail_with_their_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_with_failures(dir.path());
    let stderr_lines = "  stderr: Traceback (most recent call last):\n  stderr:   File \"server.py\", line 3, in <module>\n  stderr: ModuleNotFoundError: No module named docker\n";

    // tools: the working server in full on stdout, each failure on stderr, exit 2.
    let (out, stderr) = run(&config, &["tools"], 2);
    assert_eq!(
        out,
        "scripted\tsearch\tSearches, with schemas as pydantic writes them.\n"
    );
    let dying = stderr
        .find("mcpx: server 'dying': ")
        .unwrap_or_else(|| panic!("{stderr}"));
    let reason = &stderr[dying..];
    let end = reason.find('\n').unwrap();
    assert!(reason[end + 1..].starts_with(stderr_lines), "{stderr}");
    assert!(
        stderr.contains("mcpx: server 'gone': cannot start `/nonexistent/mcp-server`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "mcpx: server 'silent': did not start and list its tools within 0.5 s (its startupTimeout)"
        ),
        "{stderr}"
    );

    // lint: the same, and exit 2 wins over a clean lint.
    assert_eq!(run(&config, &["lint"], 2).0, "0 problems\n");

    // servers: one row each, the dying one's stderr under its row.
    // Without a terminal no status line is drawn: stderr stays empty.
    let (text, status) = run(&config, &["servers"], 2);
    assert_eq!(status, "");
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].starts_with("scripted\tstdio\tok\t2025-06-18 (probed)\t1 tools"));
    assert!(rows[1].starts_with("dying\tstdio\tfailed\tserver 'dying': "));
    assert!(rows[2].starts_with("gone\tstdio\tfailed\tserver 'gone': cannot start"));
    assert!(rows[3].starts_with("silent\tstdio\tfailed\tserver 'silent': did not start"));
    assert!(text.contains(stderr_lines), "{text}");
    let report: Value = serde_json::from_str(&run(&config, &["servers", "--json"], 2).0).unwrap();
    assert_eq!(
        report[1]["stderr"][2],
        "ModuleNotFoundError: No module named docker"
    );

    // One server named: its failure is the command's, with the stderr.
    for command in [&["tools", "dying"][..], &["call", "dying", "x"]] {
        let (out, err) = run(&config, command, 2);
        assert_eq!(out, "");
        assert!(err.ends_with(stderr_lines), "{err}");
    }
}

/// A server that starts only once `other` has started too: it marks its own start in `dir`,
/// waits (at most 10 s) for the other's mark, and fails without it.
fn waiting_server(dir: &Path, name: &str, other: &str) -> Value {
    let wait = format!(
        r#"touch "{dir}/{name}"; i=0
while [ ! -e "{dir}/{other}" ]; do
  i=$((i + 1)); [ "$i" -gt 100 ] && {{ echo "{other} never started" >&2; exit 1; }}
  sleep 0.1
done
exec sh "{dir}/scripted.sh" "{dir}/tools.json"
"#,
        dir = dir.display()
    );
    let script = dir.join(format!("{name}.sh"));
    std::fs::write(&script, wait).unwrap();
    json!({"command": "sh", "args": [script]})
}

#[test]
#[cfg_attr(windows, ignore = "its servers are `sh` scripts")]
fn servers_start_at_the_same_time() {
    // Each of the two starts only when the other has started: one after the other, the first
    // would give up; together, both start.
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        r#", "left": {}, "right": {}"#,
        waiting_server(dir.path(), "left", "right"),
        waiting_server(dir.path(), "right", "left")
    );
    let config = config(dir.path(), &extra);
    let (out, err) = run(&config, &["servers"], 0);
    assert_eq!(err, "");
    assert_eq!(
        out.lines().filter(|l| l.contains("\tok\t")).count(),
        3,
        "{out}"
    );
}

/// The command line shows warnings on stderr, and `-q` silences them: a server that dies on the
/// `server/discover` probe (as the MCP Python SDK 1.6 does) is started again without it, and the
/// warning names the server and says how to skip the probe. Before, only `serve` logged, and the
/// command line said nothing. The answer on stdout is the same either way (`--json` stays JSON).
#[test]
fn warnings_reach_stderr_and_quiet_silences_them() {
    let dir = tempfile::tempdir().unwrap();
    let entry =
        json!({"command": common::MCPX, "args": ["demo-server", "--crash-on-unknown-method"]});
    let config = dir.path().join("mcpx.json");
    std::fs::write(&config, json!({"mcpServers": {"dies": entry}}).to_string()).unwrap();
    let quietly = {
        let config = config.clone();
        std::thread::spawn(move || run(&config, &["-q", "servers", "--json"], 0))
    };
    let (out, err) = run(&config, &["servers", "--json"], 0);
    let warning = err
        .lines()
        .find(|l| l.starts_with("mcpx: warning: server{name=dies}: the server failed after the server/discover probe"))
        .unwrap_or_else(|| panic!("no warning on stderr: {err}"));
    assert!(
        warning.contains(r#""protocol": "legacy" in its entry skips the probe"#),
        "{warning}"
    );
    let (quiet_out, quiet_err) = quietly.join().unwrap();
    assert_eq!(quiet_err, "");
    for out in [out, quiet_out] {
        let report: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report[0]["started"], true, "{report}");
        assert_eq!(report[0]["eraChosen"], "fell-back", "{report}");
    }
}

#[test]
#[cfg_attr(windows, ignore = "its scripted servers are `sh` scripts")]
fn a_server_out_of_time_among_the_others_is_started_once_more_at_the_end() {
    // Its first start hangs past its startupTimeout (as a start starved of CPU by the others
    // would); its second, once the others are done, answers.
    let dir = tempfile::tempdir().unwrap();
    let starved = format!(
        r#"if [ -e "{dir}/once" ]; then exec sh "{dir}/scripted.sh" "{dir}/tools.json"; fi
touch "{dir}/once"; exec sleep 60
"#,
        dir = dir.path().display()
    );
    let script = dir.path().join("starved.sh");
    std::fs::write(&script, starved).unwrap();
    let extra = format!(
        r#", "starved": {}"#,
        json!({"command": "sh", "args": [script], "startupTimeout": 1})
    );
    let config = config(dir.path(), &extra);
    let (out, err) = run(&config, &["servers"], 0);
    assert_eq!(err, "");
    assert!(out.contains("starved\tstdio\tok\t"), "{out}");
}
