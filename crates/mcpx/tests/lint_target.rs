//! `mcpx lint --target`: what a provider's tool-calling API would refuse, on the demo server.

mod common;

use common::{config, run};

#[test]
fn a_target_names_the_tools_its_api_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &[], "", "");
    let (out, _) = run(&config, &["lint", "--target", "gemini"], 1);
    assert_eq!(
        out,
        "demo: get-sum: gemini: $: not a field of Gemini's Schema: additionalProperties (the API rejects the request)\n\
         demo: echo: gemini: $: not a field of Gemini's Schema: $schema (the API rejects the request)\n\
         2 problems\n"
    );
    // What OpenAI refuses only for strict tools is a note: the exit code says no problem.
    let (out, _) = run(&config, &["lint", "--target", "openai"], 0);
    assert!(
        out.contains("demo: count: openai: $: properties not in \"required\": pauseMs (the API rejects it with strict: true)\n"),
        "{out}"
    );
    assert!(
        out.ends_with("0 problems\n6 findings only for strict tools (not a problem unless the client sends strict: true)\n"),
        "{out}"
    );
    let (_, err) = run(&config, &["lint", "--target", "mistral"], 2);
    assert!(err.contains("mistral"), "{err}");
}
