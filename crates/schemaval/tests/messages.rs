//! Every kind of violation line and compile error, pinned: a wording change is a visible diff in
//! `messages.json`.

use schemaval::{parse_json, Schema};

#[test]
fn every_message_kind_is_pinned() {
    let cases = parse_json(include_bytes!("messages.json")).unwrap();
    let mut mismatches = Vec::new();
    for case in cases.as_array().unwrap() {
        let kind = case["kind"].as_str().unwrap();
        let got: Vec<String> = match (Schema::compile(&case["schema"]), case.get("error")) {
            (Ok(schema), None) => match schema.validate(&case["instance"]) {
                Ok(()) => vec![],
                Err(err) => err.lines(),
            },
            (Err(err), Some(_)) => vec![err.to_string()],
            (Ok(_), Some(_)) => vec!["<compiled>".to_owned()],
            (Err(err), None) => vec![format!("<compile error: {err}>")],
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
        if got != want {
            mismatches.push(format!("{kind}:\n  want {want:?}\n  got  {got:?}"));
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
