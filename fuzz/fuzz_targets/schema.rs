//! Compiles arbitrary bytes as a schema and validates arbitrary bytes against it: no panic, no
//! abort, whatever the input. The input is split at its first NUL byte: schema, then instance.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (schema, instance) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b"null"[..]),
    };
    let Ok(schema) = schemaval::Schema::from_slice(schema) else {
        return;
    };
    let Ok(instance) = schemaval::parse_json(instance) else {
        return;
    };
    let valid = schema.is_valid(&instance);
    let report = schema.validate(&instance);
    assert_eq!(valid, report.is_ok(), "yes/no and error lines disagree");
    if let Err(err) = report {
        assert!(!err.lines().is_empty());
    }
});
