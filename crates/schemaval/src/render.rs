//! How a value or a property name appears in a line and in a hint: scalars exactly, strings
//! quoted and cut, containers by size; numbers judged integral the way the policy does.

use serde_json::Value;

use crate::path;
use crate::MAX_QUOTED_CHARS;

pub(crate) fn is_integral(n: &serde_json::Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let text = n.as_str();
    match text.split_once(['e', 'E']) {
        None => text
            .split_once('.')
            .is_none_or(|(_, frac)| frac.bytes().all(|b| b == b'0')),
        // Exponent forms: decided by value where f64 can say; 1e400 and the like count as numbers.
        Some(_) => n
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0),
    }
}

/// A value as it appears in a line: scalars exactly, strings quoted and cut, containers by size.
pub(crate) fn render(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::String(s) => serde_json::to_string(cut(s).as_ref()).unwrap_or_default(),
        Value::Array(items) => format!("an array of {} item{}", items.len(), plural(items.len())),
        Value::Object(map) => format!(
            "an object of {} propert{}",
            map.len(),
            if map.len() == 1 { "y" } else { "ies" }
        ),
    }
}

pub(crate) fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]).into(),
        None => s.into(),
    }
}

/// A property name in single quotes, escaped and cut like a path key.
pub(crate) fn quote_key(name: &str) -> String {
    let mut out = String::new();
    path::push_key(&mut out, &cut(name));
    match out.strip_prefix("['").and_then(|s| s.strip_suffix("']")) {
        Some(inner) => format!("'{inner}'"),
        None => format!("'{}'", &out[1..]),
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
