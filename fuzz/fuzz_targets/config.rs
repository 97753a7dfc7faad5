//! Arbitrary text as an mcpx config file (the `mcpServers` format, validated by the bundled config
//! schema, with `${VAR}` expansion): no panic, and a config that is accepted has every `${VAR}`
//! in the expanded fields replaced. Variables whose names start with `SET` are set (to `v`);
//! all others are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpclient::Reach;
use mcpx::config::parse;

fn lookup(name: &str) -> Option<String> {
    name.starts_with("SET").then(|| "v".to_owned())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((servers, _gateway)) = parse(text, &lookup) else {
        return;
    };
    for server in servers {
        let expanded: Vec<&str> = match &server.transport {
            Reach::Stdio(command) => std::iter::once(command.program.as_str())
                .chain(command.args.iter().map(String::as_str))
                .chain(command.env.iter().map(|(_, v)| v.as_str()))
                .collect(),
            Reach::Http(http) => std::iter::once(http.url.as_str())
                .chain(http.headers.iter().map(|(_, v)| v.as_str()))
                .collect(),
            // Only tests build an in-process server; no config text can name one.
            Reach::InProcess(_) => panic!("{}: a config made an in-process server", server.name),
            // An entry that cannot be used (a variable not set) says why; it expands nothing.
            Reach::Unusable { problem, .. } => {
                assert!(!problem.is_empty(), "{}: unusable, with no reason", server.name);
                Vec::new()
            }
        };
        for field in expanded {
            assert!(
                !field.contains("${"),
                "{}: `{field}` was not expanded",
                server.name
            );
        }
    }
});
