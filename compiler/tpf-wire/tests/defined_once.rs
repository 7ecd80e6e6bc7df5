//! Every wire name is spelled once, here: no other source file or template writes the binding
//! table's keys, the action gateway's request and response keys, the driver's error names or
//! TPF's record attributes as a string literal. Code and templates get them from this crate
//! (templates through the compiler's render context).
//!
//! Tests may spell them (that is how they pin the values); the scan skips test directories and
//! `#[cfg(test)]` modules. Names that are also ordinary words elsewhere (`status`, `driver`,
//! `wakeup`, `version`, …) cannot be told apart by a scan and are not listed.

use std::path::{Path, PathBuf};

use tpf_wire::gateway::binding::{self as binding, attr as binding_attr, DeliveryOutcome};
use tpf_wire::gateway::host::driver_error;
use tpf_wire::gateway::invoke;
use tpf_wire::gateway::key::{input, request, response};
use tpf_wire::gateway::names::{coordinator, prefix};
use tpf_wire::gateway::response::SWEEPED;
use tpf_wire::records::{
    execution_attr, table_key, AwaitInteractionRecord, AwaitUnitRecord, DynamoItem,
    ExecutionRecord, PipelineReleaseRecord, ReleaseActivationEvent,
};

/// The names the scan looks for.
fn names() -> Vec<&'static str> {
    vec![
        request::AWAIT_IDENTITY,
        request::PROVIDER_EXECUTION_NAME,
        request::PROVIDER_EXECUTION_ARN,
        request::PROVIDER_CALLBACK_ID,
        request::EXPECTED_VERSION,
        response::EXECUTION_STATUS,
        response::RESULT_JSON,
        input::RESUME_EXECUTION_ID,
        driver_error::EXECUTION_ENDED,
        binding::PROVIDER_EXECUTION_INDEX,
        binding_attr::PROVIDER_EXECUTION_NAME,
        binding_attr::PROVIDER_EXECUTION_ARN,
        binding_attr::PROVIDER_CALLBACK_ID,
        binding_attr::BINDING_STATUS,
        binding_attr::EXPIRES_AT_EPOCH_S,
        binding_attr::DELIVERED_AT_EPOCH_MS,
        binding_attr::PROVIDER_OUTCOME,
        prefix::REGISTRATION,
        prefix::DELIVERED,
        coordinator::SUBMIT_STEP,
        coordinator::RESUME_STEP,
        coordinator::RESULT_STEP,
        SWEEPED,
        invoke::PATH,
        invoke::FUNCTION_ERROR_HEADER,
        tpf_wire::gateway::key::relay::GATEWAY_REQUEST,
        tpf_wire::gateway::key::HANDED_OVER_TO,
        driver_error::CALLBACK_IDENTITY_MISMATCH,
        driver_error::NO_CHECKPOINT,
        driver_error::NO_RESULT,
        execution_attr::REDRIVE_INTENT,
        execution_attr::FAILED_STEP_INDEX,
        table_key::PAYLOAD_ID,
        table_key::PAYLOAD_PART,
        table_key::SCOPE_KEY,
        table_key::QUERY_CONTINUATION_KEY,
        table_key::QUERY_CONTINUATION_DUE_EPOCH_MS,
        table_key::QUERY_EXECUTION_KEY,
        table_key::QUERY_EXECUTION_SORT,
        DeliveryOutcome::CallbackAccepted.as_str(),
        DeliveryOutcome::ProviderStateSucceeded.as_str(),
    ]
    .into_iter()
    .chain(execution_attr::CARRIED.iter().copied())
    .chain(record_attributes())
    .collect()
}

/// The attribute names of TPF's rows, as the records write them. A one-word name (`status`,
/// `version`, `attempt`) is also an ordinary word elsewhere, so only names with an underscore
/// are scanned.
fn record_attributes() -> Vec<&'static str> {
    [
        ExecutionRecord::attribute_names(),
        AwaitUnitRecord::attribute_names(),
        AwaitInteractionRecord::attribute_names(),
        PipelineReleaseRecord::attribute_names(),
        ReleaseActivationEvent::attribute_names(),
    ]
    .into_iter()
    .flatten()
    .copied()
    .filter(|name| name.contains('_'))
    .collect()
}

/// Spellings that are another contract's, with the same name: (name, file, why).
const ELSEWHERE: &[(&str, &str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The part of a source file that ships: everything before its `#[cfg(test)]` module.
fn shipped(text: &str) -> &str {
    text.find("\n#[cfg(test)]").map_or(text, |i| &text[..i])
}

/// `(file, name)` for every literal `"name"` in `text`.
fn spelled<'a>(file: &str, text: &str, names: &[&'a str]) -> Vec<(String, &'a str)> {
    names
        .iter()
        .filter(|n| shipped(text).contains(&format!("\"{n}\"")))
        .map(|n| (file.to_owned(), *n))
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "tests" | "benches" | "examples" | "fixtures" | "node_modules"
            ) && !name.starts_with('.')
            {
                walk(&path, out);
            }
        } else if name.ends_with(".rs") || name.ends_with(".hbs") {
            out.push(path);
        }
    }
}

#[test]
fn wire_names_are_spelled_only_in_tpf_wire() {
    let root = root();
    let mut files = Vec::new();
    for top in ["adapter", "compiler", "mapping-tests", "templates"] {
        walk(&root.join(top), &mut files);
    }
    assert!(
        files.len() > 50,
        "the scan found only {} files",
        files.len()
    );
    let names = names();
    let mut found = Vec::new();
    let mut excused = Vec::new();
    for path in &files {
        let file = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        if file.starts_with("compiler/tpf-wire/src/") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        for (f, n) in spelled(&file, &text, &names) {
            match ELSEWHERE.iter().find(|(en, ef, _)| *en == n && *ef == f) {
                Some(entry) => excused.push(entry),
                None => found.push((f, n)),
            }
        }
    }
    for entry in ELSEWHERE {
        assert!(
            excused.contains(&entry),
            "{entry:?} is excused but no longer spelled there: drop it"
        );
    }
    assert!(
        found.is_empty(),
        "wire names spelled outside tpf-wire (use its constants): {found:?}"
    );
}

#[test]
fn the_scan_covers_tpf_record_attributes() {
    let names = names();
    for attribute in [
        "lease_owner",
        "next_due_epoch_ms",
        "registry_sort",
        "ttl_epoch_s",
    ] {
        assert!(names.contains(&attribute), "{attribute} is not scanned");
    }
    assert!(!names.contains(&"status"), "one-word names are not scanned");
    let code = "let owner = row.get(\"lease_owner\");\n";
    assert_eq!(spelled("x.rs", code, &names).len(), 1);
}

#[test]
fn the_scan_sees_a_spelled_name_and_ignores_tests() {
    let names = names();
    let code = "let s = v[\"executionStatus\"];\n#[cfg(test)]\nmod tests { \"resultJson\" }\n";
    assert_eq!(
        spelled("x.rs", code, &names),
        vec![("x.rs".to_owned(), response::EXECUTION_STATUS)]
    );
    assert!(spelled("t.hbs", "\"Error\": {{json e}}", &names).is_empty());
    assert_eq!(
        spelled("t.hbs", "\"Error\": \"TPF.ExecutionEnded\"", &names).len(),
        1
    );
}
