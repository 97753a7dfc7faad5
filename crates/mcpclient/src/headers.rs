//! The HTTP headers a 2026-07-28 request carries beside its body: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` (the tool, prompt or resource), and `Mcp-Param-{Name}` for each
//! argument a tool's `inputSchema` marks with `x-mcp-header`, so that intermediaries can route
//! without reading the body. Values that are not plain header text travel as
//! `=?base64?…?=`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::modern::META_PROTOCOL_VERSION;
use crate::Frame;

/// The largest integer an `x-mcp-header` argument may carry (JavaScript's safe range).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Where a tool's header arguments are: the header's name part and the chain of `properties`
/// keys leading to the argument.
pub type HeaderParams = Vec<(String, Vec<String>)>;

/// The header arguments of each listed tool (only tools that have some), shared between the
/// client, which fills it at list time, and the HTTP transport, which reads it at call time.
pub type ToolHeaders = Arc<RwLock<HashMap<String, HeaderParams>>>;

/// The `x-mcp-header` declarations of `input_schema`, checked as 2026-07-28 requires.
///
/// # Errors
/// Why the declarations make the tool unusable: an empty or non-token name, a duplicate (case
/// blind), a parameter that is not a string, integer or boolean, or one reached through
/// anything but `properties`.
pub fn header_params(input_schema: &Value) -> Result<HeaderParams, String> {
    let mut found = Vec::new();
    walk(input_schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for (name, path) in &found {
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(format!(
                "x-mcp-header {name:?} at {} is not an HTTP header name token",
                pointer(path)
            ));
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header {name:?} is declared twice"));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn pointer(path: &[String]) -> String {
    let mut text = "$".to_owned();
    for key in path {
        text.push('.');
        text.push_str(key);
    }
    text
}

/// Collects the declarations under `schema`; `reachable` says whether `schema` is reached from
/// the root through `properties` only.
fn walk(
    schema: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut HeaderParams,
) -> Result<(), String> {
    let Value::Object(members) = schema else {
        return Ok(());
    };
    if let Some(name) = members.get("x-mcp-header") {
        let Some(name) = name.as_str() else {
            return Err(format!("x-mcp-header at {} is not a string", pointer(path)));
        };
        if !reachable || path.is_empty() {
            return Err(format!(
                "x-mcp-header {name:?} at {} is not on a property reached through properties alone",
                pointer(path)
            ));
        }
        let primitive = match members.get("type") {
            Some(Value::String(t)) => ["string", "integer", "boolean"].contains(&t.as_str()),
            _ => false,
        };
        if !primitive {
            return Err(format!(
                "x-mcp-header {name:?} at {} is on a parameter that is not a string, integer or boolean",
                pointer(path)
            ));
        }
        found.push((name.to_owned(), path.clone()));
    }
    for (key, value) in members {
        match key.as_str() {
            "properties" => {
                if let Value::Object(properties) = value {
                    for (property, schema) in properties {
                        path.push(property.clone());
                        walk(schema, path, reachable, found)?;
                        path.pop();
                    }
                }
            }
            // Constants and examples are data, not schemas.
            "const" | "enum" | "default" | "examples" => {}
            _ => match value {
                Value::Object(_) => walk(value, path, false, found)?,
                Value::Array(items) => {
                    for item in items {
                        walk(item, path, false, found)?;
                    }
                }
                _ => {}
            },
        }
    }
    Ok(())
}

/// RFC 9110's `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A header value as 2026-07-28 writes it: as it is when it is visible ASCII and spaces
/// without leading or trailing whitespace, else `=?base64?{UTF-8 as base64}?=` (also for a
/// plain value that looks like that form).
pub fn encode_header_value(text: &str) -> String {
    let visible = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = text.starts_with(' ') || text.ends_with(' ');
    let looks_encoded = text.starts_with("=?base64?") && text.ends_with("?=");
    let plain = visible && !padded && !looks_encoded;
    if plain {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", base64(text.as_bytes()))
    }
}

/// A header value read back: the text of a `=?base64?…?=` form, or the value as it is.
/// `None` when the form's content is not base64 of UTF-8.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(unbase64(encoded)?).ok(),
        None => Some(value.to_owned()),
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unbase64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut n = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        n = n << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((n >> bits & 0xff) as u8);
        }
    }
    Some(out)
}

/// The headers of a modern request frame (one whose `_meta` names its protocol version):
/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` where the method names something, and the
/// tool's `Mcp-Param-*`. `None` for any other frame.
pub(crate) fn modern_headers(frame: &Frame, tools: &ToolHeaders) -> Option<Vec<(String, String)>> {
    if !frame.text().contains(META_PROTOCOL_VERSION) {
        return None;
    }
    let request = frame.value().ok()?;
    let method = request.get("method")?.as_str()?;
    let params = request.get("params");
    let version = params?.get("_meta")?.get(META_PROTOCOL_VERSION)?.as_str()?;
    let mut headers = vec![
        ("mcp-protocol-version".to_owned(), version.to_owned()),
        ("mcp-method".to_owned(), encode_header_value(method)),
    ];
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(name) = name_key
        .and_then(|key| params?.get(key))
        .and_then(Value::as_str)
    {
        headers.push(("mcp-name".to_owned(), encode_header_value(name)));
        if method == "tools/call" {
            let declared = tools.read().unwrap_or_else(|p| p.into_inner());
            if let (Some(declared), Some(arguments)) =
                (declared.get(name), params?.get("arguments"))
            {
                headers.extend(param_headers(declared, arguments));
            }
        }
    }
    Some(headers)
}

/// The `Mcp-Param-*` headers of a call's arguments; an argument that is absent or null has
/// none.
fn param_headers(declared: &HeaderParams, arguments: &Value) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    for (name, path) in declared {
        let value = path.iter().try_fold(arguments, |v, key| v.get(key));
        let text = match value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i) if i.abs() <= MAX_SAFE_INTEGER => i.to_string(),
                // Out of range (the schema is enforced first, so this is only a number the
                // schema let through): sent as written.
                _ => n.to_string(),
            },
            _ => continue,
        };
        headers.push((format!("mcp-param-{name}"), encode_header_value(&text)));
    }
    headers
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_encoded_as_the_spec_shows() {
        for (value, header) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(encode_header_value(value), header);
            assert_eq!(decode_header_value(header).as_deref(), Some(value));
        }
        assert_eq!(decode_header_value("=?base64?!!?="), None);
    }

    #[test]
    fn declarations_are_checked() {
        let good = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "q": {"type": "string"}}});
        let found = header_params(&good).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found.contains(&("Region".to_owned(), vec!["region".to_owned()])));
        assert!(found.contains(&("N".to_owned(), vec!["nested".to_owned(), "n".to_owned()])));
        for (bad, why) in [
            (
                json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
                "not a string, integer",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                "not an HTTP header name",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
                "not an HTTP header name",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
                "declared twice",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
                "properties alone",
            ),
            (
                json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                "properties alone",
            ),
        ] {
            let error = header_params(&bad).unwrap_err();
            assert!(error.contains(why), "{bad}: {error}");
        }
    }

    #[test]
    fn a_modern_call_carries_its_headers() {
        let tools: ToolHeaders = ToolHeaders::default();
        tools.write().unwrap().insert(
            "sql".to_owned(),
            vec![
                ("Region".to_owned(), vec!["region".to_owned()]),
                ("Flag".to_owned(), vec!["f".to_owned()]),
            ],
        );
        let frame = Frame::from_value(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sql", "arguments": {"region": "eu 1", "f": true},
                "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}}));
        let headers = modern_headers(&frame, &tools).unwrap();
        assert_eq!(
            headers,
            vec![
                ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
                ("mcp-method".to_owned(), "tools/call".to_owned()),
                ("mcp-name".to_owned(), "sql".to_owned()),
                ("mcp-param-Region".to_owned(), "eu 1".to_owned()),
                ("mcp-param-Flag".to_owned(), "true".to_owned()),
            ]
        );
        let legacy = Frame::from_value(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        assert!(modern_headers(&legacy, &tools).is_none());
    }
}
