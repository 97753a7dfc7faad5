//! Elicitation on a terminal: the requested fields asked one by one on stderr, with their types;
//! enums as a selection, defaults pre-filled, each answer checked against its field's schema and
//! asked again until it is valid. Accept, decline and cancel are offered first.

use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, Input, MultiSelect, Select};
use mcpclient::ElicitationAnswer;
use schemaval::Schema;
use serde_json::{Map, Value};

use mcpx::arguments::typed;

/// Asks the user on the terminal. `problems` are why the previous answer was not sent.
pub(crate) fn ask(message: &str, schema: &Value, problems: &[String]) -> ElicitationAnswer {
    match ask_fields(message, schema, problems) {
        Ok(answer) => answer,
        // The terminal went away (or Ctrl-C): that is a cancel.
        Err(_) => ElicitationAnswer::Cancel,
    }
}

fn ask_fields(
    message: &str,
    schema: &Value,
    problems: &[String],
) -> dialoguer::Result<ElicitationAnswer> {
    let theme = ColorfulTheme::default();
    let term = dialoguer::console::Term::stderr();
    term.write_line(&format!("The server asks: {message}"))?;
    for line in problems {
        term.write_line(&format!("  not sent: {line}"))?;
    }
    let action = Select::with_theme(&theme)
        .with_prompt("Answer")
        .items(["accept (answer the questions)", "decline", "cancel"])
        .default(0)
        .interact_on(&term)?;
    match action {
        1 => return Ok(ElicitationAnswer::Decline),
        2 => return Ok(ElicitationAnswer::Cancel),
        _ => {}
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let needed = required.contains(&name.as_str());
        if let Some(value) = ask_field(&theme, &term, name, field, needed)? {
            content.insert(name.clone(), value);
        }
    }
    Ok(ElicitationAnswer::Accept(Value::Object(content)))
}

/// The label of a field: its title (or name), its type, and whether it may be left out.
fn label(name: &str, field: &Value, kind: &str, needed: bool) -> String {
    let title = field["title"].as_str().unwrap_or(name);
    let mut label = format!("{title} ({kind}{})", if needed { "" } else { ", optional" });
    if let Some(description) = field["description"].as_str() {
        label.push_str(&format!(" - {description}"));
    }
    label
}

/// The choices of an enum field: `(value, shown)` pairs.
fn choices(field: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(values) = field["enum"].as_array() {
        let names = field["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let shown = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(
                            || v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                            str::to_owned,
                        );
                    (v.clone(), shown)
                })
                .collect(),
        );
    }
    let options = field["oneOf"].as_array().or(field["anyOf"].as_array())?;
    Some(
        options
            .iter()
            .map(|o| {
                (
                    o["const"].clone(),
                    o["title"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
    )
}

fn ask_field(
    theme: &ColorfulTheme,
    term: &dialoguer::console::Term,
    name: &str,
    field: &Value,
    needed: bool,
) -> dialoguer::Result<Option<Value>> {
    let kind = field["type"].as_str().unwrap_or("string");
    if kind == "array" {
        let Some(options) = choices(&field["items"]) else {
            return Ok(None);
        };
        let defaults: Vec<bool> = options
            .iter()
            .map(|(v, _)| field["default"].as_array().is_some_and(|d| d.contains(v)))
            .collect();
        let shown: Vec<&str> = options.iter().map(|(_, s)| s.as_str()).collect();
        let picked = MultiSelect::with_theme(theme)
            .with_prompt(label(name, field, "choose any, space to pick", needed))
            .items(&shown)
            .defaults(&defaults)
            .interact_on(term)?;
        return Ok(Some(Value::Array(
            picked.into_iter().map(|i| options[i].0.clone()).collect(),
        )));
    }
    if let Some(options) = choices(field) {
        let default = options
            .iter()
            .position(|(v, _)| *v == field["default"])
            .unwrap_or(0);
        let shown: Vec<&str> = options.iter().map(|(_, s)| s.as_str()).collect();
        let picked = Select::with_theme(theme)
            .with_prompt(label(name, field, "choose one", needed))
            .items(&shown)
            .default(default)
            .interact_on(term)?;
        return Ok(Some(options[picked].0.clone()));
    }
    if kind == "boolean" {
        let answer = Confirm::with_theme(theme)
            .with_prompt(label(name, field, "yes/no", needed))
            .default(field["default"].as_bool().unwrap_or(false))
            .interact_on(term)?;
        return Ok(Some(Value::Bool(answer)));
    }
    let check = Schema::compile(field).ok();
    loop {
        let mut input = Input::<String>::with_theme(theme)
            .with_prompt(label(name, field, kind, needed))
            .allow_empty(!needed);
        if let Some(default) = field.get("default") {
            input = input.default(
                default
                    .as_str()
                    .map_or_else(|| default.to_string(), str::to_owned),
            );
        }
        let text = input.interact_text_on(term)?;
        if text.is_empty() && !needed {
            return Ok(None);
        }
        let value = typed(&text, Some(field));
        match check.as_ref().map(|s| s.validate(&value)) {
            Some(Err(err)) => {
                for line in err.lines() {
                    term.write_line(&format!("  {}", line.replacen('$', name, 1)))?;
                }
            }
            _ => return Ok(Some(value)),
        }
    }
}
