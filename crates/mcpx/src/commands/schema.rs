//! `mcpx schema check` and `mcpx schema validate`.

use std::fmt::Write;
use std::process::ExitCode;

use anyhow::Context;
use schemaval::{CompileError, Schema};
use serde_json::{json, Value};

use crate::cli::{self, Source};
use crate::{input, output};

pub(crate) fn run(command: cli::Schema) -> anyhow::Result<ExitCode> {
    match command {
        cli::Schema::Check { files, json } => check(&files, json),
        cli::Schema::Validate {
            schema,
            instances,
            json,
        } => validate(&schema, &instances, json),
    }
}

fn compile(source: &Source) -> Result<Schema, String> {
    let bytes = input::read(source).map_err(|e| format!("{e:#}"))?;
    Schema::from_slice(&bytes).map_err(|e: CompileError| e.to_string())
}

fn check(files: &[Source], json: bool) -> anyhow::Result<ExitCode> {
    let mut text = String::new();
    let mut report = Vec::new();
    let mut failed = false;
    for file in files {
        match compile(file) {
            Ok(schema) => report.push(
                json!({"file": file.name(), "ok": true, "dialect": schema.dialect().to_string()}),
            ),
            Err(error) => {
                failed = true;
                let _ = writeln!(text, "{}: {error}", file.name());
                report.push(json!({"file": file.name(), "ok": false, "error": error}));
            }
        }
    }
    if json {
        text = format!("{}\n", serde_json::to_string_pretty(&Value::Array(report))?);
    }
    output::print(&text)?;
    Ok(exit(if failed { cli::EXIT_TROUBLE } else { 0 }))
}

fn validate(schema: &Source, instances: &[Source], json: bool) -> anyhow::Result<ExitCode> {
    let schema = compile(schema).map_err(|error| anyhow::anyhow!("{}: {error}", schema.name()))?;
    let mut parsed = Vec::with_capacity(instances.len());
    for source in instances {
        let bytes = input::read(source).with_context(|| source.name())?;
        let value = schemaval::parse_json(&bytes)
            .map_err(|e| anyhow::anyhow!("{}: invalid JSON: {e}", source.name()))?;
        parsed.push((source, value));
    }
    let mut text = String::new();
    let mut report = Vec::new();
    let mut any_invalid = false;
    for (source, value) in &parsed {
        let lines = match schema.validate(value) {
            Ok(()) => Vec::new(),
            Err(err) => err.lines(),
        };
        any_invalid |= !lines.is_empty();
        if parsed.len() > 1 {
            let verdict = if lines.is_empty() { "valid" } else { "invalid" };
            let _ = writeln!(text, "{}: {verdict}", source.name());
            for line in &lines {
                let _ = writeln!(text, "  {line}");
            }
        } else {
            for line in &lines {
                let _ = writeln!(text, "{line}");
            }
        }
        report.push(json!({"file": source.name(), "valid": lines.is_empty(), "violations": lines}));
    }
    if json {
        text = format!("{}\n", serde_json::to_string_pretty(&Value::Array(report))?);
    }
    output::print(&text)?;
    Ok(exit(if any_invalid { cli::EXIT_NO } else { 0 }))
}

fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}
