//! Golden diagnostics for the compiler's three inputs, and the example contracts.

use std::path::{Path, PathBuf};

use tpf_sfn_compiler::config::DriverConfig;
use tpf_sfn_compiler::contract::{
    load_contract, Cardinality, ContractOptions, HashCheck, LoadedContract,
};
use tpf_sfn_compiler::release::{load_release, resolve_identity};
use tpf_sfn_compiler::{Diagnostic, Diagnostics};

const STRICT: ContractOptions = ContractOptions {
    allow_unverified_hash: false,
};
const LENIENT: ContractOptions = ContractOptions {
    allow_unverified_hash: true,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Reads a file given relative to the workspace root; the same relative name labels diagnostics.
fn read(rel: &str) -> Vec<u8> {
    std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

fn contract_ok(rel: &str, opts: ContractOptions) -> LoadedContract {
    match load_contract(rel, &read(rel), opts) {
        Ok(c) => c,
        Err(d) => panic!("{rel} should load:\n{d}"),
    }
}

fn contract_err(rel: &str, opts: ContractOptions) -> Diagnostics {
    match load_contract(rel, &read(rel), opts) {
        Ok(c) => panic!("{rel} should not load, got {:?}", c.hash),
        Err(d) => d,
    }
}

fn show(diags: &[Diagnostic]) -> String {
    Diagnostics(diags.to_vec()).to_string()
}

fn codes(diags: &Diagnostics) -> Vec<&'static str> {
    diags.0.iter().map(|d| d.code).collect()
}

#[test]
fn malformed_json() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/malformed.pipeline-contract.json",
        STRICT,
    );
    insta::assert_snapshot!("malformed_json", d.to_string());
}

#[test]
fn truncated_json_is_reported_at_the_end() {
    let rel = "compiler/tpf-sfn-compiler/tests/fixtures/truncated.pipeline-contract.json";
    let d = contract_err(rel, STRICT);
    let text = String::from_utf8_lossy(&read(rel)).into_owned();
    assert_eq!(
        d.0.first().and_then(|d| d.location.line),
        Some(text.lines().count())
    );
    insta::assert_snapshot!("truncated_json", d.to_string());
}

#[test]
fn wrong_hash_is_an_error() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/wrong-hash.pipeline-contract.json",
        STRICT,
    );
    assert_eq!(codes(&d), ["CONTRACT_HASH_MISMATCH"]);
    insta::assert_snapshot!("wrong_hash", d.to_string());
}

#[test]
fn wrong_hash_is_a_warning_when_allowed() {
    let loaded = contract_ok(
        "compiler/tpf-sfn-compiler/tests/fixtures/wrong-hash.pipeline-contract.json",
        LENIENT,
    );
    assert!(matches!(loaded.hash, HashCheck::Unverified { .. }));
    insta::assert_snapshot!("wrong_hash_allowed", show(&loaded.warnings));
}

#[test]
fn schema_version_4() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/schema4.pipeline-contract.json",
        STRICT,
    );
    insta::assert_snapshot!("schema_version_4", d.to_string());
}

#[test]
fn schema_version_0() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/schema0.pipeline-contract.json",
        STRICT,
    );
    insta::assert_snapshot!("schema_version_0", d.to_string());
}

#[test]
fn no_steps() {
    let d = contract_err(
        "examples/contracts/llm-query-fixture.unverified-hash.pipeline-contract.json",
        LENIENT,
    );
    assert!(codes(&d).contains(&"CONTRACT_NO_STEPS"));
    insta::assert_snapshot!("no_steps", d.to_string());
}

#[test]
fn composition_under_schema_1() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/composition-schema1.pipeline-contract.json",
        STRICT,
    );
    insta::assert_snapshot!("composition_schema_1", d.to_string());
}

#[test]
fn composition_under_schema_2() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/composition-schema2.pipeline-contract.json",
        STRICT,
    );
    insta::assert_snapshot!("composition_schema_2", d.to_string());
}

#[test]
fn unknown_cardinality() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/unknown-cardinality.pipeline-contract.json",
        STRICT,
    );
    assert_eq!(codes(&d), ["CONTRACT_CARDINALITY"]);
    insta::assert_snapshot!("unknown_cardinality", d.to_string());
}

#[test]
fn unknown_fields() {
    let d = contract_err(
        "compiler/tpf-sfn-compiler/tests/fixtures/unknown-field.pipeline-contract.json",
        STRICT,
    );
    assert_eq!(
        codes(&d),
        ["CONTRACT_UNKNOWN_FIELD", "CONTRACT_UNKNOWN_FIELD"]
    );
    insta::assert_snapshot!("unknown_fields", d.to_string());
}

#[test]
fn release_that_does_not_match_the_contract() {
    let contract = contract_ok(
        "examples/contracts/restaurant-approval.pipeline-contract.json",
        STRICT,
    )
    .contract;
    let rel = "compiler/tpf-sfn-compiler/tests/fixtures/mismatched.pipeline-release.json";
    let release = load_release(rel, &read(rel)).unwrap_or_else(|d| panic!("{d}"));
    let d = resolve_identity(&contract, Some((rel, &release)))
        .err()
        .unwrap_or_else(|| panic!("should mismatch"));
    insta::assert_snapshot!("release_mismatch", d.to_string());
}

#[test]
fn release_with_unknown_artifact_keys() {
    let rel = "examples/contracts/docs-example.strict-loader-rejects.pipeline-release.json";
    let d = load_release(rel, &read(rel))
        .err()
        .unwrap_or_else(|| panic!("should be rejected"));
    assert_eq!(
        codes(&d),
        ["RELEASE_UNKNOWN_FIELD", "RELEASE_UNKNOWN_FIELD"]
    );
    insta::assert_snapshot!("release_unknown_keys", d.to_string());
}

#[test]
fn matching_release_pins_its_release_version() {
    let contract = contract_ok(
        "examples/contracts/restaurant-approval.pipeline-contract.json",
        STRICT,
    )
    .contract;
    let rel = "examples/contracts/restaurant-approval.pipeline-release.json";
    let release = load_release(rel, &read(rel)).unwrap_or_else(|d| panic!("{d}"));
    let id = resolve_identity(&contract, Some((rel, &release))).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(id.release_version, release.release_version);
    let alone = resolve_identity(&contract, None).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(alone.release_version, contract.contract_version);
    assert_eq!(
        alone.pipeline_id,
        "org.pipelineframework.restaurantapproval"
    );
}

#[test]
fn several_bad_config_values() {
    let rel = "compiler/tpf-sfn-compiler/tests/fixtures/bad-values.tpf-sfn.toml";
    let text = String::from_utf8_lossy(&read(rel)).into_owned();
    let cfg = DriverConfig::from_toml(rel, &text).unwrap_or_else(|d| panic!("{d}"));
    let diags = cfg.check(rel);
    assert!(diags
        .iter()
        .all(|d| d.code == "CONFIG_VALUE" && !d.hint.is_empty()));
    insta::assert_snapshot!("config_bad_values", show(&diags));
}

#[test]
fn config_syntax_error() {
    let rel = "compiler/tpf-sfn-compiler/tests/fixtures/syntax-error.tpf-sfn.toml";
    let text = String::from_utf8_lossy(&read(rel)).into_owned();
    let d = DriverConfig::from_toml(rel, &text)
        .err()
        .unwrap_or_else(|| panic!("should fail"));
    insta::assert_snapshot!("config_syntax_error", d.to_string());
}

#[test]
fn config_unknown_key() {
    let rel = "compiler/tpf-sfn-compiler/tests/fixtures/unknown-key.tpf-sfn.toml";
    let text = String::from_utf8_lossy(&read(rel)).into_owned();
    let d = DriverConfig::from_toml(rel, &text)
        .err()
        .unwrap_or_else(|| panic!("should fail"));
    insta::assert_snapshot!("config_unknown_key", d.to_string());
}

#[test]
fn config_wrong_type() {
    let d = DriverConfig::from_toml("inline.toml", "[history]\nevent-budget = \"lots\"\n")
        .err()
        .unwrap_or_else(|| panic!("should fail"));
    insta::assert_snapshot!("config_wrong_type", d.to_string());
}

/// Every example contract except the deliberately unverifiable llm fixture loads and verifies.
#[test]
fn example_contracts_load_and_verify() {
    let dir = root().join("examples/contracts");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".pipeline-contract.json") && !n.starts_with("llm-query-fixture"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 13, "{names:?}");
    for name in names {
        let rel = format!("examples/contracts/{name}");
        let loaded = contract_ok(&rel, STRICT);
        assert_eq!(loaded.hash, HashCheck::Verified, "{rel}");
        assert_eq!(
            loaded.warnings,
            Vec::new(),
            "{rel}: {}",
            show(&loaded.warnings)
        );
    }
}

#[test]
fn example_shapes() {
    let multi = contract_ok(
        "examples/contracts/multi-await.pipeline-contract.json",
        STRICT,
    )
    .contract;
    let transports: Vec<_> = multi
        .steps
        .iter()
        .filter_map(|s| s.await_transport.as_ref().map(|t| t.as_str().to_string()))
        .collect();
    assert_eq!(transports, ["interaction-api", "webhook", "kafka"]);

    let fan = contract_ok("examples/contracts/fan-out.pipeline-contract.json", STRICT).contract;
    assert_eq!(fan.schema_version, 2);
    let first = fan
        .steps
        .first()
        .map(|s| (s.cardinality_raw.as_str(), s.cardinality));
    assert_eq!(first, Some(("EXPANSION", Cardinality::OneToMany)));
    assert_eq!(
        fan.steps.last().map(|s| s.cardinality),
        Some(Cardinality::ManyToOne)
    );

    let big = contract_ok(
        "examples/contracts/thousand-steps.pipeline-contract.json",
        STRICT,
    )
    .contract;
    assert_eq!(big.steps.len(), 1000);
    assert_eq!(big.steps.iter().filter(|s| s.is_await()).count(), 10);

    let comp = contract_ok(
        "examples/contracts/composition.pipeline-contract.json",
        STRICT,
    )
    .contract;
    assert_eq!(comp.composition.map(|c| c.definitions.len()), Some(2));

    let long = contract_ok(
        "examples/contracts/long-names.pipeline-contract.json",
        STRICT,
    )
    .contract;
    let awaits: Vec<String> = long
        .steps
        .iter()
        .filter(|s| s.is_await())
        .map(|s| s.authored_name.chars().take(80).collect())
        .collect();
    assert_eq!(awaits.len(), 2);
    assert_eq!(awaits.first(), awaits.get(1));
    assert!(long
        .steps
        .iter()
        .all(|s| s.authored_name.chars().count() == 200));
}

/// Loads the composition example after `edit`, hash mismatches downgraded, and returns the codes.
fn composition_codes(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<&'static str> {
    let rel = "examples/contracts/composition.pipeline-contract.json";
    let mut doc: serde_json::Value = serde_json::from_slice(&read(rel)).unwrap_or_default();
    edit(&mut doc);
    let bytes = serde_json::to_vec(&doc).unwrap_or_default();
    let diags = match load_contract(rel, &bytes, LENIENT) {
        Ok(c) => c.warnings,
        Err(d) => d.0,
    };
    diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

fn set(doc: &mut serde_json::Value, ptr: &str, v: serde_json::Value) {
    match doc.pointer_mut(ptr) {
        Some(slot) => *slot = v,
        None => panic!("no {ptr}"),
    }
}

#[test]
fn composition_rules() {
    use serde_json::json;
    // definitions[0] is `enrich-order` (called), definitions[1] is `main` (root).
    assert_eq!(composition_codes(|_| {}), Vec::<&str>::new());
    assert_eq!(
        composition_codes(|d| set(d, "/composition/rootDefinitionId", json!("nope"))),
        ["CONTRACT_COMPOSITION_ROOT"]
    );
    assert_eq!(
        composition_codes(|d| set(
            d,
            "/composition/definitions/1/continuations/2/kind",
            json!("RETURN")
        )),
        ["CONTRACT_COMPOSITION_TERMINAL"]
    );
    assert_eq!(
        composition_codes(|d| set(d, "/composition/definitions/0/nodes/1/index", json!(5))),
        ["CONTRACT_COMPOSITION_INDEX"]
    );
    assert_eq!(
        composition_codes(|d| set(
            d,
            "/composition/definitions/1/continuations/0/nextNodeId",
            json!("ghost")
        )),
        [
            "CONTRACT_COMPOSITION_TARGET",
            "CONTRACT_COMPOSITION_UNREACHABLE",
            "CONTRACT_COMPOSITION_UNREACHABLE"
        ]
    );
    // A called definition that calls its caller back: mutual recursion.
    let mutual = composition_codes(|d| {
        set(
            d,
            "/composition/definitions/0/nodes/0/kind",
            json!("pipeline"),
        );
        set(
            d,
            "/composition/definitions/0/nodes/0/targetDefinitionId",
            json!("main"),
        );
    });
    assert_eq!(mutual, ["CONTRACT_COMPOSITION_CYCLE"]);
    // Direct self-recursion is allowed.
    let self_call = composition_codes(|d| {
        set(
            d,
            "/composition/definitions/0/nodes/0/kind",
            json!("pipeline"),
        );
        set(
            d,
            "/composition/definitions/0/nodes/0/targetDefinitionId",
            json!("enrich-order"),
        );
    });
    assert_eq!(self_call, Vec::<&str>::new());
    // A NEXT_LOCAL loop inside a definition.
    let looped = composition_codes(|d| {
        set(
            d,
            "/composition/definitions/1/continuations/1/nextNodeId",
            json!("validate-order"),
        );
    });
    assert!(looped.contains(&"CONTRACT_COMPOSITION_CYCLE"), "{looped:?}");
    // An uncalled definition.
    let orphan = composition_codes(|d| {
        set(
            d,
            "/composition/definitions/1/nodes/1/kind",
            json!("direct"),
        );
        set(
            d,
            "/composition/definitions/1/nodes/1/targetDefinitionId",
            json!(""),
        );
    });
    assert_eq!(orphan, ["CONTRACT_COMPOSITION_UNREACHABLE"]);
}

#[test]
fn await_transport_warnings() {
    let rel = "examples/contracts/restaurant-approval.pipeline-contract.json";
    let mut doc: serde_json::Value = serde_json::from_slice(&read(rel)).unwrap_or_default();
    set(
        &mut doc,
        "/steps/2/awaitTransport",
        serde_json::json!("carrier-pigeon"),
    );
    if let Some(step) = doc.pointer_mut("/steps/0").and_then(|s| s.as_object_mut()) {
        step.insert("awaitTransport".into(), serde_json::json!("kafka"));
    }
    let bytes = serde_json::to_vec(&doc).unwrap_or_default();
    let loaded = load_contract(rel, &bytes, LENIENT).unwrap_or_else(|d| panic!("{d}"));
    let codes: Vec<_> = loaded.warnings.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            "CONTRACT_AWAIT_TRANSPORT_UNUSED",
            "CONTRACT_AWAIT_TRANSPORT_UNKNOWN",
            "CONTRACT_HASH_MISMATCH"
        ]
    );
    let step = loaded
        .contract
        .steps
        .get(2)
        .and_then(|s| s.await_transport.clone());
    assert_eq!(
        step,
        Some(tpf_sfn_compiler::contract::AwaitTransport::Other(
            "carrier-pigeon".into()
        ))
    );
}

#[test]
fn every_contract_problem_is_reported_in_one_pass() {
    let text = r#"{"schemaVersion": 2, "pipelineId": 7, "contractVersion": "sha256:x", "contractHash": "x",
        "steps": [{"index": 3, "authoredName": " ", "kind": "internal", "cardinality": "SIDEWAYS"}, 4],
        "extra": true}"#;
    let d = load_contract("inline.json", text.as_bytes(), STRICT)
        .err()
        .unwrap_or_else(|| panic!("must fail"));
    insta::assert_snapshot!("one_pass", d.to_string());
}

#[test]
fn release_rules() {
    let text = r#"{"schemaVersion": 2, "pipelineId": " ", "contractVersion": "sha256:x", "releaseVersion": "",
        "artifacts": [{"artifactId": "a", "kind": "ZIP", "uri": "s3://b/k", "digest": "md5:00"},
                      {"artifactId": "b", "kind": "Container-Image", "uri": "oci://x", "digest": "sha256:1"}]}"#;
    let d = load_release("inline.json", text.as_bytes())
        .err()
        .unwrap_or_else(|| panic!("must fail"));
    assert_eq!(
        codes(&d),
        [
            "RELEASE_SCHEMA_VERSION",
            "RELEASE_BLANK_FIELD",
            "RELEASE_BLANK_FIELD",
            "RELEASE_ARTIFACT_KIND",
            "RELEASE_ARTIFACT_DIGEST"
        ]
    );
    let empty = r#"{"schemaVersion": 1, "pipelineId": "p", "contractVersion": "c", "releaseVersion": "r", "artifacts": []}"#;
    let d = load_release("inline.json", empty.as_bytes())
        .err()
        .unwrap_or_else(|| panic!("must fail"));
    assert_eq!(codes(&d), ["RELEASE_NO_ARTIFACTS"]);
    assert!(d.0.iter().all(|d| !d.hint.is_empty()));
}

const CURRENT_RESTAURANT: &str =
    "examples/contracts/restaurant-approval-current.pipeline-contract.json";

/// Today's Restaurant Approval with `edit` applied, loaded leniently (edits break the hash):
/// the codes of every diagnostic, errors and warnings, in order.
fn current_codes(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<&'static str> {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&read(CURRENT_RESTAURANT)).unwrap_or_default();
    edit(&mut doc);
    let bytes = serde_json::to_vec(&doc).unwrap_or_default();
    let diags = match load_contract(CURRENT_RESTAURANT, &bytes, LENIENT) {
        Ok(l) => l.warnings,
        Err(d) => d.0,
    };
    diags
        .iter()
        .map(|d| d.code)
        .filter(|c| *c != "CONTRACT_HASH_MISMATCH")
        .collect()
}

#[test]
fn todays_contract_shape_loads_with_its_await_from_deferred_completion() {
    let loaded = contract_ok(CURRENT_RESTAURANT, STRICT);
    assert_eq!(loaded.hash, HashCheck::Verified);
    assert_eq!(loaded.warnings, Vec::new(), "{}", show(&loaded.warnings));
    let c = loaded.contract;
    assert_eq!(c.steps.len(), 3);
    let awaits: Vec<u32> = c
        .steps
        .iter()
        .filter(|s| s.is_await())
        .map(|s| s.index)
        .collect();
    assert_eq!(
        awaits,
        [1],
        "today's TPF has no `await` kind: the step kinds are internal"
    );
    let step = &c.steps[1];
    assert_eq!(step.kind, "internal");
    let d = step
        .deferred_completion
        .as_ref()
        .unwrap_or_else(|| panic!("no deferredCompletion"));
    assert_eq!(
        (d.timeout.as_str(), d.timeout_ms),
        ("PT30M", 30 * 60 * 1000)
    );
    assert_eq!(d.correlation_strategy, "interactionId");
    assert_eq!(d.idempotency_key_fields, ["orderId"]);
    assert_eq!(
        step.await_transport,
        Some(tpf_sfn_compiler::contract::AwaitTransport::InteractionApi)
    );
    assert_eq!(step.ingress(), "callback");
    let facts = step.facts();
    assert!(facts.is_await);
    assert_eq!(facts.await_timeout_ms, Some(1_800_000));
    assert_eq!(facts.correlation_strategy, Some("interactionId"));
    assert_eq!(
        facts.idempotency_key_fields.map(<[String]>::to_vec),
        Some(vec!["orderId".to_owned()])
    );
}

#[test]
fn todays_contract_rules() {
    use serde_json::json;
    assert_eq!(current_codes(|_| {}), Vec::<&str>::new());
    let dc = "/steps/1/deferredCompletion";
    for bad in ["30 minutes", "PT0S", "-PT5M", "P1M"] {
        assert_eq!(
            current_codes(|d| set(d, &format!("{dc}/timeout"), json!(bad))),
            ["CONTRACT_AWAIT_TIMEOUT", "CONTRACT_FINGERPRINT"],
            "{bad}"
        );
    }
    assert_eq!(
        current_codes(|d| set(d, &format!("{dc}/timeout"), json!(30))),
        ["CONTRACT_FIELD_TYPE", "CONTRACT_FINGERPRINT"]
    );
    // A hand edit of any key leaves the fingerprint stale; a missing timeout is refused.
    assert_eq!(
        current_codes(|d| set(
            d,
            &format!("{dc}/idempotencyKeyFields"),
            json!(["orderId", "x"])
        )),
        ["CONTRACT_FINGERPRINT"]
    );
    assert_eq!(
        current_codes(|d| {
            if let Some(o) = d.pointer_mut(dc).and_then(|v| v.as_object_mut()) {
                o.remove("timeout");
            }
        }),
        ["CONTRACT_MISSING_FIELD", "CONTRACT_FINGERPRINT"]
    );
    // An empty deferredCompletion is TPF's "none": not an await.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&read(CURRENT_RESTAURANT)).unwrap_or_default();
    set(&mut doc, dc, json!({}));
    let bytes = serde_json::to_vec(&doc).unwrap_or_default();
    let loaded =
        load_contract(CURRENT_RESTAURANT, &bytes, LENIENT).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        loaded
            .contract
            .steps
            .iter()
            .filter(|s| s.is_await())
            .count(),
        0
    );
    assert_eq!(
        current_codes(|d| set(d, "/steps/1/outputTypeId", json!("x.Pending"))),
        ["CONTRACT_DEFERRED_OUTPUT"]
    );
    // paging: {maxRecords >= 1}, nothing else.
    let paging = |d: &mut serde_json::Value, v: serde_json::Value| {
        if let Some(o) = d.pointer_mut("/steps/0").and_then(|s| s.as_object_mut()) {
            o.insert("paging".into(), v);
        }
    };
    assert_eq!(
        current_codes(|d| paging(d, json!({"maxRecords": 50}))),
        Vec::<&str>::new()
    );
    assert_eq!(
        current_codes(|d| paging(d, json!({"maxRecords": 0}))),
        ["CONTRACT_PAGING"]
    );
    assert_eq!(
        current_codes(|d| paging(d, json!({"maxRecords": 5, "size": 1}))),
        ["CONTRACT_UNKNOWN_FIELD"]
    );
    // Imports: only at schema 3, and then they decide the schema TPF writes.
    let imports = |d: &mut serde_json::Value, key: &str, v: serde_json::Value| {
        if let Some(o) = d.as_object_mut() {
            o.insert(key.into(), v);
        }
    };
    assert_eq!(
        current_codes(|d| imports(d, "importedDefinitions", json!([]))),
        Vec::<&str>::new()
    );
    assert_eq!(
        current_codes(|d| imports(d, "capabilityImports", json!([{"provider": "p"}]))),
        ["CONTRACT_IMPORTS_SCHEMA", "CONTRACT_SCHEMA_CONTENT"]
    );
    assert_eq!(
        current_codes(|d| {
            set(d, "/schemaVersion", json!(3));
            imports(d, "importedDefinitions", json!([{"qualifiedId": "a"}]));
        }),
        Vec::<&str>::new()
    );
    assert_eq!(
        current_codes(|d| {
            set(d, "/schemaVersion", json!(3));
            imports(d, "importedDefinitions", json!([7]));
        }),
        ["CONTRACT_FIELD_TYPE", "CONTRACT_SCHEMA_CONTENT"]
    );
}

/// An unknown field's hint says what is known about TPF, not that TPF would refuse this file.
#[test]
fn unknown_field_hint_claims_nothing_about_this_file() {
    let diags = match load_contract(
        "c.json",
        br#"{"schemaVersion":1,"pipelineId":"p","contractVersion":"sha256:x","contractHash":"x","steps":[],"owner":"me"}"#,
        STRICT,
    ) {
        Ok(_) => panic!("should not load"),
        Err(d) => d,
    };
    let hint = diags
        .0
        .iter()
        .find(|d| d.code == "CONTRACT_UNKNOWN_FIELD")
        .map(|d| d.hint.clone())
        .unwrap_or_default();
    assert!(
        hint.contains("importedDefinitions, capabilityImports"),
        "{hint}"
    );
    assert!(!hint.contains("would reject this file"), "{hint}");
}

const CURRENT_RELEASE: &str =
    "examples/contracts/restaurant-approval-current.pipeline-release.json";

/// Today's release descriptor with `edit` applied: what `load_release` and, when it loads,
/// `resolve_identity` against today's Restaurant Approval answer.
fn current_release(edit: impl FnOnce(&mut serde_json::Value)) -> Result<(), Diagnostics> {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&read(CURRENT_RELEASE)).unwrap_or_else(|e| panic!("{e}"));
    edit(&mut doc);
    let bytes = serde_json::to_vec(&doc).unwrap_or_else(|e| panic!("{e}"));
    let release = load_release("release.json", &bytes)?;
    let contract = contract_ok(CURRENT_RESTAURANT, STRICT).contract;
    resolve_identity(&contract, Some(("release.json", &release))).map(|_| ())
}

fn only_code(r: Result<(), Diagnostics>) -> &'static str {
    let d = r.err().unwrap_or_else(|| panic!("should be refused"));
    assert_eq!(
        d.0.len(),
        1,
        "today's validator stops at its first problem: {d}"
    );
    assert!(
        !d.0[0].hint.is_empty() && d.0[0].location.pointer.is_some(),
        "{d}"
    );
    d.0[0].code
}

#[test]
fn current_release_pins_its_release_version_without_warnings() {
    let contract = contract_ok(CURRENT_RESTAURANT, STRICT).contract;
    let release =
        load_release(CURRENT_RELEASE, &read(CURRENT_RELEASE)).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        release.compiled_truth_artifact_id.as_deref(),
        Some("app-jar")
    );
    assert!(release.warnings.is_empty(), "{}", show(&release.warnings));
    let id = resolve_identity(&contract, Some((CURRENT_RELEASE, &release)))
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(id.release_version, "2026.12.1");
}

#[test]
fn august_release_is_read_with_a_warning_that_today_refuses_it() {
    let rel = "examples/contracts/restaurant-approval.pipeline-release.json";
    let release = load_release(rel, &read(rel)).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(release.compiled_truth_artifact_id, None);
    let codes: Vec<_> = release.warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, ["RELEASE_AUGUST_FORM"]);
}

type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;

#[test]
fn current_release_rules_each_refuse_with_their_code() {
    use serde_json::json;
    assert_eq!(current_release(|_| {}).err(), None);
    let cases: Vec<(&str, Edit)> = vec![
        (
            "RELEASE_BLANK_FIELD",
            Box::new(|d| d["compiledTruthArtifactId"] = json!(" ")),
        ),
        (
            "RELEASE_FIELD_WHITESPACE",
            Box::new(|d| d["releaseVersion"] = json!("1 ")),
        ),
        (
            "RELEASE_ARTIFACT_ID",
            Box::new(|d| d["artifacts"][0]["artifactId"] = json!("app jar")),
        ),
        (
            "RELEASE_ARTIFACT_KIND",
            Box::new(|d| d["artifacts"][0]["kind"] = json!("local-file")),
        ),
        (
            "RELEASE_ARTIFACT_URI",
            Box::new(|d| d["artifacts"][0]["uri"] = json!("/opt/app.jar")),
        ),
        (
            "RELEASE_ARTIFACT_DIGEST",
            Box::new(|d| d["artifacts"][0]["digest"] = json!("sha256:00")),
        ),
        (
            "RELEASE_ARTIFACT_LOCATION",
            Box::new(|d| d["artifacts"][0]["kind"] = json!("container-image")),
        ),
        (
            "RELEASE_ARTIFACT_ASSOCIATION",
            Box::new(|d| d["artifacts"][0]["capabilities"] = json!(["local", "local"])),
        ),
        (
            "RELEASE_COMPILED_TRUTH",
            Box::new(|d| d["compiledTruthArtifactId"] = json!("other")),
        ),
        (
            "RELEASE_MISMATCH",
            Box::new(|d| d["pipelineId"] = json!("other")),
        ),
        (
            "RELEASE_UNKNOWN_STEP",
            Box::new(|d| d["artifacts"][0]["stepIds"][0] = json!("Nope")),
        ),
        (
            "RELEASE_UNKNOWN_CAPABILITY",
            Box::new(|d| d["artifacts"][0]["capabilities"][0] = json!("kafka")),
        ),
        (
            "RELEASE_CAPABILITIES_UNCOVERED",
            Box::new(|d| d["artifacts"][0]["capabilities"] = json!(["local"])),
        ),
        (
            "RELEASE_STEP_PLACEMENT",
            Box::new(|d| {
                d["artifacts"][0]["stepIds"] = json!(["Validate Order Request"]);
            }),
        ),
        (
            "RELEASE_NO_ARTIFACTS",
            Box::new(|d| d["artifacts"] = json!([])),
        ),
    ];
    for (want, edit) in cases {
        assert_eq!(only_code(current_release(edit)), want);
    }
}

#[test]
fn current_release_shape_problems_are_all_reported() {
    let text = r#"{"schemaVersion": 2, "compiledTruthArtifactId": "a", "extra": 1,
        "artifacts": [{"artifactId": "a", "kind": "jar", "uri": 3}]}"#;
    let d = load_release("inline.json", text.as_bytes())
        .err()
        .unwrap_or_else(|| panic!("must fail"));
    assert_eq!(
        codes(&d),
        [
            "RELEASE_UNKNOWN_FIELD",
            "RELEASE_SCHEMA_VERSION",
            "RELEASE_MISSING_FIELD",
            "RELEASE_MISSING_FIELD",
            "RELEASE_MISSING_FIELD",
            "RELEASE_FIELD_TYPE",
            "RELEASE_MISSING_FIELD"
        ]
    );
}

#[test]
fn file_and_snapshot_artifacts_load_with_a_promotion_warning() {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&read(CURRENT_RELEASE)).unwrap_or_else(|e| panic!("{e}"));
    doc["artifacts"][0]["uri"] = "file:///opt/tpf/app.jar".into();
    let bytes = serde_json::to_vec(&doc).unwrap_or_else(|e| panic!("{e}"));
    let release = load_release("release.json", &bytes).unwrap_or_else(|d| panic!("{d}"));
    let codes: Vec<_> = release.warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, ["RELEASE_NOT_PROMOTABLE"]);
}

/// The restaurant contract with `pipelineId` set to `id` and its hash and version made true again,
/// as TPF's generator would write it.
fn restaurant_with_pipeline_id(id: &str) -> Vec<u8> {
    use tpf_sfn_compiler::contract::hash::{contract_hash, contract_version};
    let rel = "examples/contracts/restaurant-approval.pipeline-contract.json";
    let mut doc: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    doc.insert("pipelineId".into(), id.into());
    let hash = contract_hash(&doc);
    doc.insert("contractVersion".into(), contract_version(&hash).into());
    doc.insert("contractHash".into(), hash.into());
    serde_json::to_vec_pretty(&doc).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_blank_pipeline_id_loads_as_in_tpf_but_compile_refuses_to_pin_it() {
    use tpf_sfn_compiler::compile::{load_inputs, Input};
    for id in ["", "  "] {
        let bytes = restaurant_with_pipeline_id(id);
        // TPF's descriptor refuses only a null pipelineId: the loader follows it.
        let loaded = load_contract("blank.json", &bytes, STRICT)
            .unwrap_or_else(|d| panic!("a blank pipelineId loads in TPF:\n{d}"));
        assert_eq!(loaded.contract.pipeline_id, id);
        let input = Input {
            contract_file: "blank.json",
            contract: &bytes,
            ..Input::default()
        };
        let d = load_inputs(&input)
            .err()
            .unwrap_or_else(|| panic!("compile pinned the blank pipelineId {id:?}"));
        assert_eq!(codes(&d), ["CONTRACT_BLANK_IDENTITY"]);
        let shown = d.to_string();
        assert!(shown.contains("/pipelineId"), "{shown}");
        assert!(shown.contains("hint"), "{shown}");
    }
    // The same contract with a pipelineId compiles: the refusal is the blank id's alone.
    let bytes = restaurant_with_pipeline_id("org.example.p");
    let input = Input {
        contract_file: "named.json",
        contract: &bytes,
        ..Input::default()
    };
    load_inputs(&input).unwrap_or_else(|d| panic!("{d}"));
}
