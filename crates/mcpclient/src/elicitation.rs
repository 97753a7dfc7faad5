//! Elicitation: the server's question is checked before the user sees it, and the user's answer
//! before the server does.
//!
//! A `requestedSchema` must have the restricted shape MCP allows (a flat object of primitive
//! and enum properties, `schemas/elicitation-requested-schema.json`) and must compile under the
//! dialect policy; otherwise the request is answered with an error and the user is never asked.
//! Content that does not match the schema is never sent: the handler is asked again with the
//! flat lines, at most [`MAX_ELICITATION_ATTEMPTS`] times, after which the answer is `cancel`.

use crate::codes::{self, ErrorObject};
use std::sync::OnceLock;

use schemaval::Schema;
use serde_json::{json, Value};

use crate::handlers::{ElicitationAnswer, ElicitationHandler, ElicitationRequest};

/// Times the handler is asked for one elicitation before the client answers `cancel` for it.
pub const MAX_ELICITATION_ATTEMPTS: usize = 5;

const SHAPE_TEXT: &str = include_str!("../schemas/elicitation-requested-schema.json");

fn shape() -> &'static Schema {
    static SHAPE: OnceLock<Schema> = OnceLock::new();
    SHAPE.get_or_init(|| {
        Schema::from_slice(SHAPE_TEXT.as_bytes()).expect("the bundled elicitation shape compiles")
    })
}

/// The result for an `elicitation/create` with these `params`, or the JSON-RPC error object
/// that refuses it.
pub(crate) async fn answer(
    handler: &dyn ElicitationHandler,
    params: Value,
    during: Option<String>,
) -> Result<Value, ErrorObject> {
    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
    if mode != "form" {
        return Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            format!(
                "elicitation mode '{mode}' is not supported: this client declared form mode only"
            ),
        ));
    }
    let requested = params
        .get("requestedSchema")
        .cloned()
        .unwrap_or(Value::Null);
    let schema = check_requested_schema(&requested)?;
    let request = ElicitationRequest {
        message: params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        requested_schema: requested,
        params,
        during,
    };
    let mut problems = Vec::new();
    for _ in 0..MAX_ELICITATION_ATTEMPTS {
        match handler.elicit(&request, &problems).await {
            ElicitationAnswer::Accept(content) => match schema.validate(&content) {
                Ok(()) => return Ok(json!({"action": "accept", "content": content})),
                Err(err) => problems = err.lines(),
            },
            ElicitationAnswer::Decline => return Ok(json!({"action": "decline"})),
            ElicitationAnswer::Cancel => return Ok(json!({"action": "cancel"})),
            ElicitationAnswer::Refuse(error) => return Err(error),
        }
    }
    tracing::warn!(
        attempts = MAX_ELICITATION_ATTEMPTS,
        last = problems.first().map(String::as_str).unwrap_or_default(),
        "no valid elicitation answer; answering cancel"
    );
    Ok(json!({"action": "cancel"}))
}

/// The compiled `requestedSchema`, or the error object naming why it cannot be shown.
pub(crate) fn check_requested_schema(requested: &Value) -> Result<Schema, ErrorObject> {
    if let Err(err) = shape().validate(requested) {
        let lines = err
            .lines()
            .into_iter()
            .map(|l| format!("requestedSchema{}", l.strip_prefix('$').unwrap_or(&l)))
            .collect::<Vec<_>>();
        return Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            format!(
                "requestedSchema is not the flat object of primitives MCP allows: {}",
                lines[0]
            ),
        )
        .with_data(json!({"violations": lines})));
    }
    Schema::compile(requested).map_err(|e| {
        ErrorObject::new(
            codes::INVALID_PARAMS,
            format!("requestedSchema does not compile: {e}"),
        )
        .with_data(json!({"violations": [e.to_string()]}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_shape_compiles() {
        let _ = shape();
    }

    #[test]
    fn flat_primitive_schemas_pass_and_nested_ones_do_not() {
        let flat = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1, "format": "email"},
            "age": {"type": "integer", "minimum": 0},
            "ok": {"type": "boolean", "default": true},
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
            "pick": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}
        }, "required": ["name"]});
        assert!(check_requested_schema(&flat).is_ok());
        let nested = json!({"type": "object", "properties": {"address": {"type": "object"}}});
        let err = check_requested_schema(&nested).unwrap_err();
        assert_eq!(
            err.to_value()["data"]["violations"][0],
            "requestedSchema.properties.address.type: enum: got \"object\", want one of \"string\", \"number\", \"integer\", \"boolean\", \"array\""
        );
        assert!(check_requested_schema(&json!({"type": "array"})).is_err());
    }
}
