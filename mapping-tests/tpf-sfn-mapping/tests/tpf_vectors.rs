//! TPF's golden vectors: values computed by executing TPF's own Java code, in
//! `fixtures/tpf-vectors/` (its `README.md` says what each file checks; the data came from The
//! Pipeline Framework, Apache-2.0, see `fixtures/README.md`). Every `*.json` file in that tree
//! (and in `fixtures/tpf-vectors-current/`, today's TPF) runs, case by case, through the
//! project's own code: the contract loader's hash, the wire crate's keys, record formats and
//! action-gateway JSON, the model's submission policy, retry formula and gateway dispatch. Each
//! family and kind has a [`Runner`] declaring the `expected` keys it checks. A vector file added
//! later runs without a code change; a file of an unknown family or kind, or an expected value
//! no runner declares, fails loudly.
//! Where the project and a vector disagree, the project is wrong.

#[path = "tpf_vectors_host/mod.rs"]
mod tpf_vectors_host;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tpf_model::coordinator::{
    normalize_tenant, plan_submission, resolve_execution_key, CoordinatorConfig, IdempotencyPolicy,
};
use tpf_sfn_compiler::contract::{
    composition::definition_fingerprint, deferred_fingerprint, load_contract, ContractOptions,
    GsonText,
};
use tpf_sfn_compiler::diagnostic::{Diagnostic, Diagnostics, Severity};
use tpf_sfn_compiler::release::uri::ArtifactUri;
use tpf_sfn_compiler::release::{current, load_release, read_release, resolve_identity, Release};
use tpf_wire::ids;
use tpf_wire::java_text::utf16_len;
use tpf_wire::records::{
    contract_descriptor_form, release_descriptor_form, AttrValue, DynamoItem, Item,
    PipelineReleaseRecord, ReleaseActivationEvent, ReleaseStatus,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/tpf-vectors")
}

fn current_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/tpf-vectors-current")
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

type Check = Result<(), String>;

fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Check {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, TPF {want:?}"))
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The message of a vector's `"ExceptionClass: message"`.
fn error_message(expected: &Value) -> Option<&str> {
    let text = str_of(expected, "error")?;
    Some(text.split_once(": ").map_or(text, |(_, m)| m))
}

/// Fails on expected keys this test neither checks nor knows to leave out.
fn known_keys(expected: &Value, checked: &[&str], not_modelled: &[&str]) -> Check {
    let unknown: Vec<&String> = expected
        .as_object()
        .map(|o| {
            o.keys()
                .filter(|k| !checked.contains(&k.as_str()) && !not_modelled.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "expected keys this test does not check: {unknown:?}"
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// contract-hash

fn contract_hash_case(index: &Path, case: &Value) -> Check {
    let expected = &case["expected"];
    let file = index
        .parent()
        .unwrap_or(Path::new("."))
        .join(str_of(case, "file").ok_or("no file")?);
    let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let loaded = load_contract("contract.json", &bytes, ContractOptions::default())
        .map_err(|d| format!("the loader refuses TPF's own contract: {d}"))?;
    let stale: Vec<String> = loaded
        .warnings
        .iter()
        .filter(|w| w.code == "CONTRACT_FINGERPRINT" || w.code == "CONTRACT_HASH_MISMATCH")
        .map(|w| w.message.clone())
        .collect();
    same("loader warnings about hashes", stale, Vec::new())?;
    let contract = &loaded.contract;
    same(
        "contractHash",
        contract.contract_hash.as_str(),
        str_of(expected, "contractHash").unwrap_or_default(),
    )?;
    same(
        "contractVersion",
        contract.contract_version.as_str(),
        str_of(expected, "contractVersion").unwrap_or_default(),
    )?;
    same(
        "schemaVersion",
        i64::from(contract.schema_version),
        expected["schemaVersion"].as_i64().unwrap_or_default(),
    )?;
    let text = GsonText::parse(&bytes).ok_or("not one JSON document")?;
    let input = String::from_utf8(text.hash_input()).map_err(|e| e.to_string())?;
    same(
        "hashInput",
        input.as_str(),
        str_of(expected, "hashInput").unwrap_or_default(),
    )?;
    same(
        "hashInputUtf8Bytes",
        input.len() as i64,
        expected["hashInputUtf8Bytes"].as_i64().unwrap_or_default(),
    )?;
    same(
        "recomputed contractHash",
        text.contract_hash().as_str(),
        str_of(expected, "contractHash").unwrap_or_default(),
    )?;
    let fp = |path: &[&str]| {
        text.value(path)
            .map(tpf_sfn_compiler::contract::hash::sha256_hex)
    };
    same(
        "canonicalCatalogFingerprint",
        fp(&["canonicalTypes"]),
        str_of(expected, "canonicalCatalogFingerprint").map(str::to_owned),
    )?;
    for (name, want) in expected["definitionFingerprints"]
        .as_object()
        .into_iter()
        .flatten()
    {
        same(
            &format!("definitionFingerprint of {name}"),
            fp(&["canonicalTypes", name, "definition"]),
            want.as_str().map(str::to_owned),
        )?;
    }
    let document: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    let definitions: BTreeMap<&str, &serde_json::Map<String, Value>> = document
        .pointer("/composition/definitions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|d| Some((d.get("definitionId")?.as_str()?, d)))
        .collect();
    let wanted = expected["compositionDefinitionFingerprints"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    same("composition definitions", definitions.len(), wanted.len())?;
    for (id, want) in &wanted {
        same(
            &format!("composition definition {id}"),
            definitions
                .get(id.as_str())
                .map(|d| definition_fingerprint(d)),
            want.as_str().map(str::to_owned),
        )?;
    }
    Ok(())
}

/// Today's contract-hash case: every check of the August family, plus what sits outside
/// `expected` — the deferred-completion fingerprints and whether TPF's runtime loader reads the
/// document back — and the awaits the loader finds.
fn current_contract_case(index: &Path, case: &Value) -> Check {
    known_keys(
        case,
        &[
            "id",
            "description",
            "file",
            "expected",
            "deferredCompletionFingerprints",
            "tpfRuntimeLoader",
        ],
        &[],
    )?;
    contract_hash_case(index, case)?;
    let file = index
        .parent()
        .unwrap_or(Path::new("."))
        .join(str_of(case, "file").ok_or("no file")?);
    let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let loader = &case["tpfRuntimeLoader"];
    known_keys(
        loader,
        &[
            "accepted",
            "schemaVersion",
            "steps",
            "importedDefinitions",
            "capabilityImports",
        ],
        &[],
    )?;
    let loaded = load_contract("contract.json", &bytes, ContractOptions::default());
    let contract = match (loaded, loader["accepted"].as_bool()) {
        (Ok(l), Some(true)) => l.contract,
        (Err(d), Some(true)) => return Err(format!("TPF's runtime reads it, we refuse: {d}")),
        (Ok(_), _) => return Err("TPF's runtime refuses it, we accept".into()),
        (Err(_), _) => return Ok(()),
    };
    let count = |k: &str| loader[k].as_u64().map(|n| n as usize);
    same(
        "runtime schemaVersion",
        Some(u64::from(contract.schema_version)),
        loader["schemaVersion"].as_u64(),
    )?;
    same("runtime steps", Some(contract.steps.len()), count("steps"))?;
    same(
        "runtime importedDefinitions",
        Some(contract.imported_definitions.len()),
        count("importedDefinitions"),
    )?;
    same(
        "runtime capabilityImports",
        Some(contract.capability_imports.len()),
        count("capabilityImports"),
    )?;
    // Every step with a deferred completion, and only those, is an await; its fingerprint is
    // TPF's, from exactly the text TPF hashed.
    let document: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    let wanted = case["deferredCompletionFingerprints"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let awaits: Vec<&str> = contract
        .steps
        .iter()
        .filter(|s| s.is_await())
        .map(|s| s.authored_name.as_str())
        .collect();
    let mut want_awaits: Vec<&str> = wanted.keys().map(String::as_str).collect();
    let mut got_awaits = awaits.clone();
    want_awaits.sort_unstable();
    got_awaits.sort_unstable();
    same("await steps", got_awaits, want_awaits)?;
    for (name, want) in &wanted {
        known_keys(
            want,
            &[
                "fingerprint",
                "fingerprintInput",
                "transportConfigFingerprint",
            ],
            &[],
        )?;
        let step = contract
            .steps
            .iter()
            .find(|s| s.authored_name == *name)
            .ok_or_else(|| format!("no step {name}"))?;
        let deferred = document["steps"][step.index as usize]["deferredCompletion"]
            .as_object()
            .ok_or("no deferredCompletion")?;
        let mut without = deferred.clone();
        without.remove("fingerprint");
        let input: Value = serde_json::from_str(str_of(want, "fingerprintInput").unwrap_or("null"))
            .map_err(|e| e.to_string())?;
        same("fingerprintInput (as JSON)", Value::Object(without), input)?;
        same(
            "fingerprintInput (exact text hashed)",
            tpf_sfn_compiler::contract::hash::sha256_hex(
                str_of(want, "fingerprintInput")
                    .unwrap_or_default()
                    .as_bytes(),
            ),
            str_of(want, "fingerprint").unwrap_or_default().to_owned(),
        )?;
        same(
            "deferred fingerprint",
            deferred_fingerprint(deferred),
            str_of(want, "fingerprint").unwrap_or_default().to_owned(),
        )?;
        let d = step.deferred_completion.as_ref().ok_or("not deferred")?;
        same(
            "fingerprint as loaded",
            d.fingerprint.as_str(),
            str_of(want, "fingerprint").unwrap_or_default(),
        )?;
        same(
            "transportConfigFingerprint",
            deferred["transportConfigFingerprint"].as_str(),
            str_of(want, "transportConfigFingerprint"),
        )?;
        // The loader's reading of the fields the driver and the model use.
        same(
            "timeout",
            Some(d.timeout.as_str()),
            deferred["timeout"].as_str(),
        )?;
        same(
            "correlationStrategy",
            Some(d.correlation_strategy.as_str()),
            deferred["correlationStrategy"].as_str(),
        )?;
        same(
            "idempotencyKeyFields",
            Some(Value::from(d.idempotency_key_fields.clone())),
            deferred.get("idempotencyKeyFields").cloned(),
        )?;
        let facts = step.facts();
        same("facts: await", facts.is_await, true)?;
        same(
            "facts: timeout",
            facts.await_timeout_ms,
            tpf_sfn_compiler::contract::duration::java_duration_ms(&d.timeout),
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// step-ids

fn step_ids_case(case: &Value) -> Check {
    let expected = &case["expected"];
    let name = str_of(&case["input"], "name").ok_or("no name")?;
    same(
        "stripProcessPrefix",
        ids::strip_process_prefix(name),
        str_of(expected, "stripProcessPrefix").unwrap_or_default(),
    )?;
    same(
        "formatForClassName",
        ids::format_for_class_name(ids::strip_process_prefix(name)).as_str(),
        str_of(expected, "formatForClassName").unwrap_or_default(),
    )?;
    same(
        "stepId",
        ids::step_id(name).as_str(),
        str_of(expected, "stepId").unwrap_or_default(),
    )
}

// ---------------------------------------------------------------------------------------------
// keys

fn payload(input: &Value, key: &str) -> Result<Value, String> {
    match str_of(input, key) {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("{key}: {e}")),
        None => Ok(Value::Null),
    }
}

fn submit_case(input: &Value, expected: &Value) -> Check {
    let config = CoordinatorConfig {
        default_tenant: str_of(input, "defaultTenant")
            .unwrap_or("default")
            .to_owned(),
        idempotency_policy: str_of(input, "idempotencyPolicy")
            .and_then(IdempotencyPolicy::parse)
            .ok_or("unknown idempotencyPolicy")?,
        ..CoordinatorConfig::default()
    };
    let tenant_in = str_of(input, "tenantId").unwrap_or_default();
    let body = payload(input, "inputPayloadJson")?;
    let client_key = str_of(input, "idempotencyKey");
    let tenant = normalize_tenant(&config, tenant_in);
    same(
        "tenantId",
        Some(tenant.as_str()),
        str_of(expected, "tenantId"),
    )?;
    if let Some(want) = str_of(expected, "resolvedExecutionKey") {
        let resolved = resolve_execution_key(config.idempotency_policy, &tenant, &body, client_key)
            .map_err(|e| e.to_string())?;
        same("resolvedExecutionKey", resolved.as_str(), want)?;
    }
    let plan = plan_submission(
        &config,
        tenant_in,
        str_of(input, "pipelineId").unwrap_or_default(),
        str_of(input, "releaseVersion").unwrap_or_default(),
        &body,
        client_key,
    );
    match (plan, error_message(expected)) {
        (Err(e), Some(want)) => same("error", e.to_string().as_str(), want),
        (Err(e), None) => Err(format!("refused: {e}")),
        (Ok(p), Some(want)) => Err(format!("accepted {p:?}; TPF throws {want}")),
        (Ok(p), None) => {
            same(
                "executionKey",
                Some(p.execution_key.as_str()),
                str_of(expected, "executionKey"),
            )?;
            same(
                "createCommandExecutionKey",
                Some(p.execution_key.as_str()),
                str_of(expected, "createCommandExecutionKey"),
            )?;
            same(
                "tenantExecutionKey",
                Some(ids::scoped_execution_key(&p.tenant_id, &p.execution_key).as_str()),
                str_of(expected, "tenantExecutionKey"),
            )
        }
    }
}

fn await_case(input: &Value, expected: &Value) -> Check {
    let tenant = str_of(input, "tenantId").unwrap_or_default();
    let execution = str_of(input, "executionId").unwrap_or_default();
    let step = str_of(input, "stepId").unwrap_or_default();
    let fields: Vec<String> = input["idempotencyKeyFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    let item = input["itemIndex"].as_u64().map(|i| i as u32);
    let step_index = input["stepIndex"].as_u64().unwrap_or_default() as u32;
    let request = payload(input, "requestPayloadJson")?;
    let key = ids::await_idempotency_key(execution, step, &fields, &request, item);
    let correlation = ids::correlation_id(
        str_of(input, "correlationStrategy"),
        tenant,
        execution,
        step,
        &key,
    );
    let want = |k: &str| str_of(expected, k).unwrap_or_default();
    same(
        "unitId",
        ids::await_unit_id(tenant, execution, step, step_index).as_str(),
        want("unitId"),
    )?;
    same("idempotencyKey", key.as_str(), want("idempotencyKey"))?;
    same("correlationId", correlation.as_str(), want("correlationId"))?;
    same(
        "idempotencyLookupKey",
        ids::idempotency_lookup_key(tenant, step, &key).as_str(),
        want("idempotencyLookupKey"),
    )?;
    same(
        "correlationLookupKey",
        ids::correlation_lookup_key(tenant, &correlation).as_str(),
        want("correlationLookupKey"),
    )?;
    same(
        "tenantIdUtf16Length",
        utf16_len(tenant) as i64,
        expected["tenantIdUtf16Length"].as_i64().unwrap_or(-1),
    )?;
    same(
        "tenantIdUtf8Length",
        tenant.len() as i64,
        expected["tenantIdUtf8Length"].as_i64().unwrap_or(-1),
    )
}

fn item_case(input: &Value, expected: &Value) -> Check {
    let tenant = str_of(input, "tenantId").unwrap_or_default();
    let key = ids::ItemContinuationKey::new(
        tenant,
        str_of(input, "parentExecutionId").unwrap_or_default(),
        str_of(input, "parentExecutionKey").unwrap_or_default(),
        str_of(input, "unitId").unwrap_or_default(),
        input["itemIndex"].as_i64().unwrap_or_default(),
    );
    match (key, error_message(expected)) {
        (Err(e), Some(want)) => same("error", e.0.as_str(), want),
        (Err(e), None) => Err(format!("refused: {e}")),
        (Ok(k), Some(want)) => Err(format!("accepted {k:?}; TPF throws {want}")),
        (Ok(k), None) => {
            let want = |n: &str| str_of(expected, n).unwrap_or_default();
            same(
                "childExecutionKey",
                k.child_execution_key().as_str(),
                want("childExecutionKey"),
            )?;
            same(
                "dispatchClaimKey",
                k.dispatch_claim_key().as_str(),
                want("dispatchClaimKey"),
            )?;
            same("segmentId", k.segment_id().as_str(), want("segmentId"))?;
            same(
                "transitionKey",
                k.transition_key().as_str(),
                want("transitionKey"),
            )?;
            same(
                "childTenantExecutionKey",
                ids::scoped_execution_key(tenant, &k.child_execution_key()).as_str(),
                want("childTenantExecutionKey"),
            )?;
            same(
                "parsed back",
                ids::parse_child_execution_key(&k.child_execution_key()),
                Some((k.unit_id.clone(), k.item_index)),
            )
        }
    }
}

/// The `keys` family: the runner table declares each kind's expected keys.
fn keys_case(case: &Value) -> Check {
    let (input, expected) = (&case["input"], &case["expected"]);
    match str_of(case, "kind") {
        Some("submit") => submit_case(input, expected),
        Some("deriveServerExecutionKey") => {
            let tenant = str_of(input, "tenantId").unwrap_or_default();
            let body = payload(input, "inputPayloadJson")?;
            same(
                "serializedPayload",
                Some(ids::server_key_payload(&body).as_str()),
                str_of(expected, "serializedPayload"),
            )?;
            same(
                "executionKey",
                Some(ids::derive_server_execution_key(tenant, &body).as_str()),
                str_of(expected, "executionKey"),
            )
        }
        Some("awaitInteraction") => await_case(input, expected),
        Some("lookupKey") => same(
            "lookupKey",
            Some(
                ids::lookup_key(
                    str_of(input, "lookupKind").unwrap_or_default(),
                    str_of(input, "tenantId").unwrap_or_default(),
                    str_of(input, "key").unwrap_or_default(),
                )
                .as_str(),
            ),
            str_of(expected, "lookupKey"),
        ),
        Some("itemContinuation") => item_case(input, expected),
        other => Err(format!("unknown kind {other:?}")),
    }
}

// ---------------------------------------------------------------------------------------------
// retry-delays

fn retry_case(case: &Value) -> Check {
    let input = &case["input"];
    let multiplier: f64 = str_of(input, "retryMultiplier")
        .ok_or("no retryMultiplier")?
        .parse()
        .map_err(|e| format!("retryMultiplier: {e}"))?;
    let config = CoordinatorConfig {
        retry_delay_ms: input["retryDelayMs"].as_i64().ok_or("no retryDelayMs")?,
        retry_multiplier: multiplier,
        ..CoordinatorConfig::default()
    };
    same(
        "delayMs",
        config.retry_delay_for(input["nextAttempt"].as_i64().unwrap_or_default()),
        case["expected"]["delayMs"].as_i64().unwrap_or(-1),
    )
}

// ---------------------------------------------------------------------------------------------
// release-rows

fn to_item(dynamo_json: &Value) -> Result<Item, String> {
    let mut item = Item::new();
    for (name, v) in dynamo_json.as_object().ok_or("item is not an object")? {
        let value = match v.as_object().and_then(|o| o.iter().next()) {
            Some((t, Value::String(s))) if t == "S" => AttrValue::S(s.clone()),
            Some((t, Value::String(n))) if t == "N" => AttrValue::N(n.clone()),
            Some((t, Value::Bool(b))) if t == "BOOL" => AttrValue::Bool(*b),
            Some((t, Value::Bool(true))) if t == "NULL" => AttrValue::Null,
            _ => return Err(format!("attribute {name}: unsupported {v}")),
        };
        item.insert(name.clone(), value);
    }
    Ok(item)
}

fn item_json(item: &Item) -> Value {
    Value::Object(
        item.iter()
            .map(|(k, v)| {
                let v = match v {
                    AttrValue::S(s) => json!({ "S": s }),
                    AttrValue::N(n) => json!({ "N": n }),
                    AttrValue::Bool(b) => json!({ "BOOL": b }),
                    AttrValue::Ss(set) => json!({ "SS": set }),
                    AttrValue::Null => json!({ "NULL": true }),
                };
                (k.clone(), v)
            })
            .collect(),
    )
}

/// The vectors' summary of a `PipelineReleaseRecord`.
fn summary(r: &PipelineReleaseRecord) -> Value {
    json!({
        "tenantId": r.tenant_id,
        "pipelineId": r.pipeline_id,
        "contractVersion": r.contract_version,
        "releaseVersion": r.release_version,
        "status": r.status,
        "descriptorReleaseVersion": r.descriptor["releaseVersion"],
        "descriptorArtifactIds": r.descriptor["artifacts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a["artifactId"].clone())
            .collect::<Vec<_>>(),
        "primaryArtifactId": r.primary_artifact_id,
        "primaryArtifactDigest": r.primary_artifact_digest,
        "primaryArtifactUri": r.primary_artifact_uri,
        "primaryArtifactSizeBytes": r.primary_artifact_size_bytes,
        "primaryArtifactChecksum": r.primary_artifact_checksum,
        "contractPresent": r.contract.is_some(),
        "contractHash": r.contract.as_ref().map(|c| c["contractHash"].clone()),
        "createdAtEpochMs": r.created_at_epoch_ms,
        "updatedAtEpochMs": r.updated_at_epoch_ms,
        "activatedAtEpochMs": r.activated_at_epoch_ms,
    })
}

fn record_from(
    input: &Value,
    contracts: &BTreeMap<String, Value>,
) -> Result<PipelineReleaseRecord, String> {
    let r = &input["record"];
    let text = |k: &str| str_of(r, k).unwrap_or_default().to_owned();
    let num = |k: &str| r[k].as_i64().unwrap_or_default();
    let contract = match (r["contractPresent"].as_bool(), str_of(r, "contractHash")) {
        (Some(true), Some(hash)) => Some(
            contracts
                .get(hash)
                .and_then(contract_descriptor_form)
                .ok_or_else(|| format!("no contract fixture hashes to {hash}"))?,
        ),
        _ => None,
    };
    Ok(PipelineReleaseRecord {
        tenant_id: text("tenantId"),
        pipeline_id: text("pipelineId"),
        contract_version: text("contractVersion"),
        release_version: text("releaseVersion"),
        status: ReleaseStatus::parse(&text("status")).ok_or("unknown status")?,
        descriptor: input["descriptor"].clone(),
        primary_artifact_id: text("primaryArtifactId"),
        primary_artifact_digest: text("primaryArtifactDigest"),
        primary_artifact_uri: text("primaryArtifactUri"),
        primary_artifact_size_bytes: num("primaryArtifactSizeBytes"),
        primary_artifact_checksum: text("primaryArtifactChecksum"),
        contract,
        created_at_epoch_ms: num("createdAtEpochMs"),
        updated_at_epoch_ms: num("updatedAtEpochMs"),
        activated_at_epoch_ms: num("activatedAtEpochMs"),
    })
}

fn activation_from(input: &Value) -> ReleaseActivationEvent {
    ReleaseActivationEvent {
        tenant_id: str_of(input, "tenantId").unwrap_or_default().to_owned(),
        pipeline_id: str_of(input, "pipelineId").unwrap_or_default().to_owned(),
        release_version: str_of(input, "releaseVersion")
            .unwrap_or_default()
            .to_owned(),
        activated_at_epoch_ms: input["activatedAtEpochMs"].as_i64().unwrap_or_default(),
    }
}

/// A read TPF refuses must be refused for the same attribute and reason.
fn refused_like(err: &tpf_wire::records::ItemError, want: &str) -> Check {
    if want.ends_with(&format!("is {} {}", err.problem, err.attribute)) {
        Ok(())
    } else {
        Err(format!("refused with `{err}`; TPF: {want}"))
    }
}

fn item_matches(got: &Item, expected: &Value) -> Check {
    let names: Vec<String> = got.keys().cloned().collect();
    let want_names: Vec<String> = expected["attributeNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    same("attribute names", names, want_names)?;
    same("item", item_json(got), expected["item"].clone())
}

fn release_case(case: &Value, contracts: &BTreeMap<String, Value>) -> Check {
    let (input, expected) = (&case["input"], &case["expected"]);
    match str_of(case, "kind") {
        Some("releaseItem") => {
            let record = record_from(input, contracts)?;
            let item = record.to_item();
            item_matches(&item, expected)?;
            // TPF writes some rows it cannot read back (an empty artifact URI).
            let read_back = &expected["readBack"];
            match (
                PipelineReleaseRecord::from_item(&item),
                str_of(read_back, "error"),
            ) {
                (Err(e), Some(want)) => refused_like(&e, want),
                (Err(e), None) => Err(format!("the row does not read back: {e}")),
                (Ok(r), Some(want)) => Err(format!("read back {r:?}; TPF refuses: {want}")),
                (Ok(back), None) => same("read back", summary(&back), read_back["record"].clone()),
            }
        }
        Some("activationItem") => {
            let event = activation_from(input);
            match (event.check(), error_message(expected)) {
                (Err(e), Some(want)) => same("error", e.to_string().as_str(), want),
                (Err(e), None) => Err(format!("refused: {e}")),
                (Ok(()), Some(want)) => Err(format!("accepted; TPF throws {want}")),
                (Ok(()), None) => {
                    let item = event.to_item();
                    item_matches(&item, expected)?;
                    let back =
                        ReleaseActivationEvent::from_item(&item).map_err(|e| e.to_string())?;
                    same(
                        "read back",
                        json!({"releaseVersion": back.release_version, "activatedAtEpochMs": back.activated_at_epoch_ms}),
                        expected["readBack"].clone(),
                    )
                }
            }
        }
        Some("readReleaseItem") => {
            let item = to_item(&input["item"])?;
            let active = match &input["activeEvent"] {
                Value::Null => None,
                event => Some(activation_from(event)),
            };
            match (
                PipelineReleaseRecord::from_item(&item),
                str_of(expected, "error"),
            ) {
                (Err(e), Some(want)) => refused_like(&e, want),
                (Err(e), None) => Err(format!("refused a row TPF reads: {e}")),
                (Ok(r), Some(want)) => Err(format!("accepted {r:?}; TPF refuses: {want}")),
                (Ok(r), None) => same(
                    "record",
                    summary(&r.with_latest_activation(active.as_ref())),
                    expected["record"].clone(),
                ),
            }
        }
        Some("readActivationItem") => {
            let item = to_item(&input["item"])?;
            match (
                ReleaseActivationEvent::from_item(&item),
                str_of(expected, "error"),
            ) {
                (Err(e), Some(want)) => refused_like(&e, want),
                (Err(e), None) => Err(format!("refused a row TPF reads: {e}")),
                (Ok(r), Some(want)) => Err(format!("accepted {r:?}; TPF refuses: {want}")),
                (Ok(r), None) => same(
                    "activation",
                    json!({"releaseVersion": r.release_version, "activatedAtEpochMs": r.activated_at_epoch_ms}),
                    expected["activation"].clone(),
                ),
            }
        }
        other => Err(format!("unknown kind {other:?}")),
    }
}

// ---------------------------------------------------------------------------------------------
// execution-status (today's TPF)

/// One `ExecutionStatus` name: the wire's value, its declaration index, TPF's `terminal()`, and
/// where TPF's own AWS durable driver stops (which both of this project's drivers follow).
fn execution_status_case(case: &Value) -> Check {
    use tpf_wire::records::ExecutionStatus;
    let expected = &case["expected"];
    let name = str_of(&case["input"], "name").ok_or("no input.name")?;
    let status = ExecutionStatus::parse(name).ok_or_else(|| format!("unknown status {name}"))?;
    same(
        "valueOf",
        Some(status.as_str()),
        str_of(expected, "valueOf"),
    )?;
    same(
        "ordinal",
        ExecutionStatus::ALL.iter().position(|s| *s == status),
        expected["ordinal"].as_u64().map(|n| n as usize),
    )?;
    same(
        "terminal",
        Some(status.terminal()),
        expected["terminal"].as_bool(),
    )?;
    same(
        "durablePollTerminal",
        Some(status.driver_stops()),
        expected["durablePollTerminal"].as_bool(),
    )?;
    same(
        "durablePollSucceeded",
        Some(status == ExecutionStatus::Succeeded),
        expected["durablePollSucceeded"].as_bool(),
    )
}

// ---------------------------------------------------------------------------------------------
// release-descriptor (today's TPF)

/// The message of a vector's `rootCause` (`"ExceptionClass: message"`).
fn root_cause(expected: &Value) -> Option<(&str, &str)> {
    str_of(expected, "rootCause").and_then(|t| t.split_once(": "))
}

/// `got` is TPF's `"ok"` or its error: the first error diagnostic carries TPF's message.
fn same_verdict(what: &str, got: &Result<(), Diagnostics>, want: &Value) -> Check {
    match (got, want) {
        (Ok(()), Value::String(ok)) if ok == "ok" => Ok(()),
        (Err(d), want) if want.get("error").is_some() => {
            let first =
                d.0.iter()
                    .find(|d| d.is_error())
                    .map(|d| d.message.as_str());
            same(what, first, error_message(want))
        }
        (got, want) => Err(format!("{what}: got {got:?}, TPF {want}")),
    }
}

fn uri_case(entry: &Value) -> Check {
    let uri = str_of(entry, "uri").ok_or("artifactUris entry without uri")?;
    let got = ArtifactUri::parse(uri);
    if entry.get("error").is_some() {
        return same(
            &format!("uri {uri}"),
            got.err().map(|e| e.0),
            error_message(entry).map(str::to_owned),
        );
    }
    let got = got.map_err(|e| format!("uri {uri}: refused ({e}), TPF accepts it"))?;
    same("scheme", Some(got.scheme()), str_of(entry, "scheme"))?;
    same(
        "promotable",
        Some(got.promotable()),
        entry["promotable"].as_bool(),
    )?;
    let shape = match &got {
        ArtifactUri::File { path } => json!({ "file": path }),
        ArtifactUri::Maven(m) => json!({ "maven": {
            "groupId": m.group_id, "artifactId": m.artifact_id, "extension": m.extension,
            "classifier": m.classifier, "version": m.version, "repositoryPath": m.repository_path(),
        }}),
        ArtifactUri::Oci { digest } => json!({ "ociDigest": digest }),
    };
    for (key, value) in shape.as_object().into_iter().flatten() {
        same(&format!("{uri} {key}"), Some(value), entry.get(key))?;
    }
    Ok(())
}

fn descriptor_json(r: &Release) -> Value {
    json!({
        "schemaVersion": r.schema_version,
        "pipelineId": r.pipeline_id,
        "contractVersion": r.contract_version,
        "releaseVersion": r.release_version,
        "compiledTruthArtifactId": r.compiled_truth_artifact_id,
        "artifacts": r.artifacts.iter().map(|a| json!({
            "artifactId": a.artifact_id, "kind": a.kind, "uri": a.uri, "digest": a.digest,
            "stepIds": a.step_ids, "capabilities": a.capabilities,
        })).collect::<Vec<_>>(),
    })
}

/// A release row written for the descriptor `text` carries TPF's record of it: the row's
/// `descriptor_json` reads back as the loaded descriptor (today's keep `compiledTruthArtifactId`).
fn release_row_keeps_descriptor(text: &str, loaded: &Value) -> Check {
    let input: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    same(
        "row descriptor form",
        release_descriptor_form(&input).as_ref(),
        Some(loaded),
    )?;
    // The row's primary artifact is the descriptor's first, or a stand-in when it lists none
    // (its fields only need to read back).
    let artifact = |key: &str| {
        let stand_in = match key {
            "uri" => "file:/releases/app.jar",
            "digest" => "sha256:00",
            _ => "app",
        };
        str_of(&loaded["artifacts"][0], key)
            .unwrap_or(stand_in)
            .to_owned()
    };
    let record = PipelineReleaseRecord {
        tenant_id: "t".into(),
        pipeline_id: str_of(loaded, "pipelineId").unwrap_or_default().into(),
        contract_version: str_of(loaded, "contractVersion").unwrap_or_default().into(),
        release_version: str_of(loaded, "releaseVersion").unwrap_or_default().into(),
        status: ReleaseStatus::Registered,
        descriptor: input,
        primary_artifact_id: artifact("artifactId"),
        primary_artifact_digest: artifact("digest"),
        primary_artifact_uri: artifact("uri"),
        primary_artifact_size_bytes: 0,
        primary_artifact_checksum: String::new(),
        contract: None,
        created_at_epoch_ms: 1,
        updated_at_epoch_ms: 1,
        activated_at_epoch_ms: 0,
    };
    let item = record.to_item();
    let AttrValue::S(written) = &item["descriptor_json"] else {
        return Err("descriptor_json is not a string".into());
    };
    let written: Value = serde_json::from_str(written).map_err(|e| e.to_string())?;
    same("row descriptor_json", &written, loaded)?;
    // Key order is the record's component order, as Jackson writes it.
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    same(
        "row descriptor_json key order",
        keys(&written),
        keys(loaded),
    )?;
    let back = PipelineReleaseRecord::from_item(&item).map_err(|e| e.to_string())?;
    same("row read back", &back.descriptor, loaded)
}

/// One `pipeline-release.json`: TPF's load, then `validate`, `validatePromotable` and
/// `validate(descriptor, contract)`, each as TPF's code answered.
fn release_descriptor_case(root: &Path, case: &Value) -> Check {
    let expected = &case["expected"];
    let text = str_of(&case["input"], "descriptorJson").ok_or("no descriptorJson")?;
    const FILE: &str = "pipeline-release.json";
    let load = &expected["load"];
    if load["accepted"] == false {
        return match (root_cause(load), load_release(FILE, text.as_bytes())) {
            // Declared deviation (docs/runtime.md): a descriptor without the key is August's
            // form, read with that TPF's rules and a warning, not refused.
            (Some(("NullPointerException", "compiledTruthArtifactId")), got) => {
                let warned = got.as_ref().is_ok_and(|r| {
                    r.compiled_truth_artifact_id.is_none()
                        && r.warnings.iter().any(|w| w.code == "RELEASE_AUGUST_FORM")
                });
                let input: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
                let august_row = release_descriptor_form(&input)
                    .is_some_and(|d| d.get("compiledTruthArtifactId").is_none());
                if warned && august_row {
                    Ok(())
                } else {
                    Err(format!(
                        "no compiledTruthArtifactId: want the August form with RELEASE_AUGUST_FORM, got {got:?}"
                    ))
                }
            }
            (Some(("UnrecognizedPropertyException", _)), Err(d))
                if d.0.iter().any(|d| d.code == "RELEASE_UNKNOWN_FIELD") =>
            {
                Ok(())
            }
            (Some(("IllegalArgumentException", message)), Err(d)) => same(
                "load",
                d.0.iter()
                    .find(|d| d.is_error())
                    .map(|d| d.message.as_str()),
                Some(message),
            ),
            (cause, got) => Err(format!("TPF refuses the load ({cause:?}), got {got:?}")),
        };
    }
    let read = read_release(FILE, text.as_bytes()).map_err(|d| format!("load refused: {d}"))?;
    same("descriptor", &descriptor_json(&read), &load["descriptor"])?;
    release_row_keeps_descriptor(text, &load["descriptor"])?;
    let validated = current::validate(FILE, &read);
    same_verdict("validate", &validated, &expected["validate"])?;
    same(
        "load_release agrees with validate",
        load_release(FILE, text.as_bytes()).is_ok(),
        validated.is_ok(),
    )?;
    let promotable = validated.clone().and_then(|()| {
        match current::promotable_warnings(FILE, &read).into_iter().next() {
            Some(w) => Err(Diagnostics(vec![Diagnostic {
                severity: Severity::Error,
                ..w
            }])),
            None => Ok(()),
        }
    });
    same_verdict(
        "validatePromotable",
        &promotable,
        &expected["validatePromotable"],
    )?;
    let contract_file = str_of(&case["input"], "contract").ok_or("no input.contract")?;
    let contract_bytes = std::fs::read(root.join(contract_file)).map_err(|e| e.to_string())?;
    let contract = load_contract(contract_file, &contract_bytes, ContractOptions::default())
        .map_err(|d| format!("{contract_file}: {d}"))?
        .contract;
    let against = validated
        .clone()
        .and_then(|()| resolve_identity(&contract, Some((FILE, &read))).map(|_| ()));
    same_verdict(
        "validateAgainstContract",
        &against,
        &expected["validateAgainstContract"],
    )?;
    for entry in expected["artifactUris"].as_array().into_iter().flatten() {
        uri_case(entry)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------

/// One case runner: the family and kind it runs, the `expected` keys it checks, the keys it
/// knowingly leaves unchecked, and the check. Before a case runs, its `expected` keys must all
/// be declared here, so an expected value nobody checks fails the case instead of passing
/// silently.
struct Runner<'a> {
    family: &'static str,
    /// The case's `kind`; `None` for a family whose cases have none.
    kind: Option<&'static str>,
    checks: &'static [&'static str],
    not_modelled: &'static [&'static str],
    run: &'a dyn Fn(&Path, &Value) -> Check,
}

impl<'a> Runner<'a> {
    fn new(
        family: &'static str,
        kind: Option<&'static str>,
        checks: &'static [&'static str],
        run: &'a dyn Fn(&Path, &Value) -> Check,
    ) -> Self {
        Self {
            family,
            kind,
            checks,
            not_modelled: &[],
            run,
        }
    }

    fn leaving(mut self, not_modelled: &'static [&'static str]) -> Self {
        self.not_modelled = not_modelled;
        self
    }
}

/// Runs every vector file under `root` with the runner of its family and kind. Fails on a
/// family or kind no runner declares, an `expected` key its runner does not declare, a failing
/// case, or a runner that found no cases.
fn run_vectors(root: &Path, runners: &[Runner<'_>]) {
    let mut files = Vec::new();
    json_files(root, &mut files);
    let mut ran: BTreeMap<(&str, Option<&str>), usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut unknown = Vec::new();
    for path in &files {
        let doc = read_json(path);
        let Some(family) = str_of(&doc, "family") else {
            // A contract document; its index runs it.
            continue;
        };
        if !runners.iter().any(|r| r.family == family) {
            unknown.push(format!("{} (family {family})", path.display()));
            continue;
        }
        for case in doc["cases"].as_array().into_iter().flatten() {
            let kind = str_of(case, "kind");
            let id = str_of(case, "id").unwrap_or("?");
            let at = path.strip_prefix(root).unwrap_or(path).display();
            let Some(runner) = runners
                .iter()
                .find(|r| r.family == family && r.kind == kind)
            else {
                failures.push(format!("{at}#{id}: no runner for kind {kind:?}"));
                continue;
            };
            *ran.entry((runner.family, runner.kind)).or_default() += 1;
            let outcome = known_keys(&case["expected"], runner.checks, runner.not_modelled)
                .and_then(|()| (runner.run)(path, case));
            if let Err(why) = outcome {
                failures.push(format!("{at}#{id}: {why}"));
            }
        }
    }
    eprintln!("TPF vectors run under {}: {ran:?}", root.display());
    assert!(
        unknown.is_empty(),
        "vector files of a family this test does not know: {unknown:?}"
    );
    for r in runners {
        assert!(
            ran.get(&(r.family, r.kind)).copied().unwrap_or(0) > 0,
            "no {} vectors of kind {:?} found under {}",
            r.family,
            r.kind,
            root.display()
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} TPF vectors fail:\n{}",
        failures.len(),
        ran.values().sum::<usize>(),
        failures.join("\n")
    );
}

/// Contract documents referenced by an index (and by release rows with a contract), by hash.
fn contracts_under(root: &Path) -> BTreeMap<String, Value> {
    let mut files = Vec::new();
    json_files(root, &mut files);
    files
        .iter()
        .map(|p| read_json(p))
        .filter(|d| d.get("family").is_none())
        .filter_map(|d| Some((str_of(&d, "contractHash")?.to_owned(), d)))
        .collect()
}

/// The `expected` keys of a contract-hash case.
const CONTRACT_HASH_KEYS: &[&str] = &[
    "contractHash",
    "contractVersion",
    "schemaVersion",
    "canonicalCatalogFingerprint",
    "definitionFingerprints",
    "compositionDefinitionFingerprints",
    "hashInput",
    "hashInputUtf8Bytes",
];

/// August 2026's TPF (`fixtures/tpf-vectors/`).
#[test]
fn tpf_vectors() {
    let contracts = contracts_under(&root());
    let contract_hash = |path: &Path, case: &Value| contract_hash_case(path, case);
    let step_ids = |_: &Path, case: &Value| step_ids_case(case);
    let keys = |_: &Path, case: &Value| keys_case(case);
    let retry = |_: &Path, case: &Value| retry_case(case);
    let release = |_: &Path, case: &Value| release_case(case, &contracts);
    run_vectors(
        &root(),
        &[
            Runner::new("contract-hash", None, CONTRACT_HASH_KEYS, &contract_hash),
            // Class and package names are TPF's code generation; the project only needs the
            // step id TPF hashes into await records.
            Runner::new(
                "step-ids",
                None,
                &["stripProcessPrefix", "formatForClassName", "stepId"],
                &step_ids,
            )
            .leaving(&[
                "templateModelBuilderServiceName",
                "packageSegment",
                "servicePackage",
                "runtimeClass",
                "clientClass",
                "contractMatchToken",
            ]),
            Runner::new(
                "keys",
                Some("submit"),
                &[
                    "tenantId",
                    "resolvedExecutionKey",
                    "executionKey",
                    "createCommandExecutionKey",
                    "tenantExecutionKey",
                    "error",
                ],
                &keys,
            ),
            Runner::new(
                "keys",
                Some("deriveServerExecutionKey"),
                &["serializedPayload", "executionKey"],
                &keys,
            ),
            Runner::new(
                "keys",
                Some("awaitInteraction"),
                &[
                    "unitId",
                    "idempotencyKey",
                    "correlationId",
                    "idempotencyLookupKey",
                    "correlationLookupKey",
                    "tenantIdUtf16Length",
                    "tenantIdUtf8Length",
                ],
                &keys,
            ),
            Runner::new("keys", Some("lookupKey"), &["lookupKey"], &keys),
            Runner::new(
                "keys",
                Some("itemContinuation"),
                &[
                    "childExecutionKey",
                    "dispatchClaimKey",
                    "segmentId",
                    "transitionKey",
                    "childTenantExecutionKey",
                    "error",
                ],
                &keys,
            ),
            Runner::new("retry-delays", None, &["delayMs"], &retry),
            Runner::new(
                "release-rows",
                Some("releaseItem"),
                &["attributeNames", "item", "readBack"],
                &release,
            ),
            Runner::new(
                "release-rows",
                Some("activationItem"),
                &["attributeNames", "item", "readBack", "error"],
                &release,
            ),
            Runner::new(
                "release-rows",
                Some("readReleaseItem"),
                &["record", "error"],
                &release,
            )
            .leaving(&["rootCause"]),
            Runner::new(
                "release-rows",
                Some("readActivationItem"),
                &["activation", "error"],
                &release,
            ),
        ],
    );
}

/// Today's, split-repository TPF (`fixtures/tpf-vectors-current/`).
#[test]
fn tpf_vectors_current() {
    let contract_hash = |path: &Path, case: &Value| current_contract_case(path, case);
    let descriptor = |_: &Path, case: &Value| release_descriptor_case(&current_root(), case);
    let status = |_: &Path, case: &Value| execution_status_case(case);
    let mut runners = vec![
        Runner::new("contract-hash", None, CONTRACT_HASH_KEYS, &contract_hash),
        // The vectors' expected values follow one stored version of TPF's validator; where the
        // other disagrees (whitespace in required text), the project follows the expected one.
        Runner::new(
            "release-descriptor",
            None,
            &[
                "load",
                "validate",
                "validatePromotable",
                "validateAgainstContract",
                "artifactUris",
            ],
            &descriptor,
        )
        .leaving(&["alternateValidator56d21a38"]),
        Runner::new(
            "execution-status",
            None,
            &[
                "valueOf",
                "ordinal",
                "terminal",
                "durablePollTerminal",
                "durablePollSucceeded",
            ],
            &status,
        ),
    ];
    runners.extend(tpf_vectors_host::runners());
    run_vectors(&current_root(), &runners);
}

/// An `expected` key no runner declares fails its case instead of passing unchecked.
#[test]
#[should_panic(expected = "expected keys this test does not check: [\"nobodyChecksThis\"]")]
fn an_expected_key_no_runner_declares_fails_the_case() {
    let dir = std::env::temp_dir().join(format!("tpf-vectors-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("probe.json"),
        json!({"family": "probe", "cases": [
            {"id": "c", "expected": {"checked": 1, "nobodyChecksThis": 2}}
        ]})
        .to_string(),
    )
    .unwrap();
    let run = |_: &Path, _: &Value| Ok(());
    run_vectors(&dir, &[Runner::new("probe", None, &["checked"], &run)]);
}
