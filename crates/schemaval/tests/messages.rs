//! Every kind of violation line and compile error, pinned: a wording change is a visible diff in
//! `messages.json`. So is every hint: a case's `hints` lists the hint beside each of its lines
//! (`null` for none); a case without `hints` has none.

use schemaval::{parse_json, Schema};

#[test]
fn every_message_kind_is_pinned() {
    let cases = parse_json(include_bytes!("messages.json")).unwrap();
    let mut mismatches = Vec::new();
    for case in cases.as_array().unwrap() {
        let kind = case["kind"].as_str().unwrap();
        let (got, got_hints): (Vec<String>, Vec<Option<String>>) =
            match (Schema::compile(&case["schema"]), case.get("error")) {
                (Ok(schema), None) => match schema.validate(&case["instance"]) {
                    Ok(()) => (vec![], vec![]),
                    Err(err) => (err.lines(), err.hints()),
                },
                (Err(err), Some(_)) => (vec![err.to_string()], vec![None]),
                (Ok(_), Some(_)) => (vec!["<compiled>".to_owned()], vec![None]),
                (Err(err), None) => (vec![format!("<compile error: {err}>")], vec![None]),
            };
        let want: Vec<String> = match case.get("error") {
            Some(error) => vec![error.as_str().unwrap().to_owned()],
            None => case["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_owned())
                .collect(),
        };
        let want_hints: Vec<Option<String>> = match case.get("hints") {
            Some(hints) => hints
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_str().map(str::to_owned))
                .collect(),
            None => vec![None; want.len()],
        };
        if got != want {
            mismatches.push(format!("{kind}:\n  want {want:?}\n  got  {got:?}"));
        }
        if got_hints != want_hints {
            mismatches.push(format!(
                "{kind} (hints):\n  want {want_hints:?}\n  got  {got_hints:?}"
            ));
        }
        if case.get("error").is_none() {
            let schema = Schema::compile(&case["schema"]).unwrap();
            assert!(
                !schema.is_valid(&case["instance"]),
                "{kind}: yes/no check disagrees"
            );
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
