//! `load_contract`: bytes in, a typed and checked [`Contract`] out, or every problem found.
//!
//! The reading mirrors TPF's Java view (`PipelineContractDescriptor` read by a Jackson mapper
//! that fails on unknown properties): the same required fields, the same defaults, the same
//! schema-3 rules. Two shapes exist in the wild and both are read: August 2026's (awaits are
//! `kind: "await"` with `awaitTransport`) and today's split-repository generator's (awaits carry
//! `deferredCompletion`; steps may carry `paging`; schema 3 writes `importedDefinitions` and
//! `capabilityImports`). A key neither shape has is refused.

use serde_json::{Map, Value};

use super::cardinality::ACCEPTED_CARDINALITIES;
use super::composition;
use super::duration::java_duration_ms;
use super::hash::{contract_hash, contract_version, fingerprint, sha256_hex, GsonText};
use super::model::{
    AwaitTransport, Capabilities, Cardinality, Contract, ContractOptions, DeferredCompletion,
    HashCheck, LoadedContract, Paging, Step,
};
use crate::diagnostic::{json_syntax, Diagnostic, Diagnostics, Location};
use crate::json_fields::{child, item, json_type, FieldCodes, FieldReader};

const TOP_LEVEL_KEYS: &[&str] = &[
    "schemaVersion",
    "pipelineId",
    "contractVersion",
    "contractHash",
    "platform",
    "transport",
    "module",
    "pluginHost",
    "runtimeLayout",
    "steps",
    "canonicalTypes",
    "canonicalCatalogFingerprint",
    "composition",
    "importedDefinitions",
    "capabilityImports",
    "capabilities",
];

use tpf_wire::step::STEP_KEYS;

const CAPABILITY_KEYS: &[&str] = &["localTransitionExecution", "transitionWorkerProtocols"];

const CODES: FieldCodes = FieldCodes {
    missing: "CONTRACT_MISSING_FIELD",
    wrong_type: "CONTRACT_FIELD_TYPE",
    unknown: "CONTRACT_UNKNOWN_FIELD",
    unknown_hint: "neither contract shape TPF writes (August 2026's, today's split-repository \
                   generator's) has this field, and TPF's runtime contract loader refuses fields \
                   it does not know; a contract from a newer TPF may need a newer tpf-sfn",
};

/// TPF's `PipelineBundleCapabilities` defaults, used when the key is absent.
pub fn default_capabilities() -> Capabilities {
    Capabilities {
        local_transition_execution: true,
        transition_worker_protocols: ["local", "rest", "grpc", "sqs"].map(String::from).to_vec(),
    }
}

/// Loads and checks a `pipeline-contract.json`. `file` only labels diagnostics.
///
/// On success the returned warnings are the non-fatal findings; on failure every error and
/// warning found in the one pass is returned, in document order.
pub fn load_contract(
    file: &str,
    bytes: &[u8],
    opts: ContractOptions,
) -> Result<LoadedContract, Diagnostics> {
    let document: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Err(json_syntax("CONTRACT_JSON_SYNTAX", file, &e).into()),
    };
    let Value::Object(obj) = &document else {
        return Err(Diagnostic::error(
            "CONTRACT_NOT_OBJECT",
            Location::pointer(file, ""),
            format!(
                "a pipeline contract is a JSON object, this file holds {}",
                json_type(&document)
            ),
        )
        .with_hint("pass TPF's META-INF/pipeline/pipeline-contract.json")
        .into());
    };
    // The other file of a TPF build, given in the contract's place: one clear diagnostic instead
    // of a schema error for each of its fields.
    if obj.contains_key("artifacts")
        && obj.contains_key("releaseVersion")
        && !obj.contains_key("steps")
    {
        return Err(Diagnostic::error(
            "CONTRACT_IS_RELEASE",
            Location::pointer(file, ""),
            "this is a release descriptor (pipeline-release.json), not a pipeline contract",
        )
        .with_hint(
            "pass it with --release, and the contract (TPF's META-INF/pipeline/pipeline-contract.json) \
             as the first argument",
        )
        .into());
    }

    // What TPF hashed: the file's own text, numbers as written (see `hash`).
    let text = GsonText::parse(bytes);
    let mut r = FieldReader::new(file, CODES);
    r.reject_unknown(obj, "", TOP_LEVEL_KEYS, "top-level contract");
    let schema_version = read_schema_version(&mut r, obj);
    let pipeline_id = r.str_req(obj, "", "pipelineId");
    let contract_version_raw = r.str_req(obj, "", "contractVersion");
    let contract_hash_raw = r.str_req(obj, "", "contractHash");
    let platform = r.str_opt(obj, "", "platform");
    let transport = r.str_opt(obj, "", "transport");
    let module = r.str_opt(obj, "", "module");
    let plugin_host = r.bool_opt(obj, "", "pluginHost").unwrap_or(false);
    let runtime_layout = r.str_opt(obj, "", "runtimeLayout");
    let steps = read_steps(&mut r, obj);
    let (canonical_types, has_contributed) = read_canonical_types(&mut r, obj, text.as_ref());
    let canonical_catalog_fingerprint = r
        .str_opt(obj, "", "canonicalCatalogFingerprint")
        .unwrap_or_default();
    check_catalog_fingerprint(&mut r, obj, text.as_ref(), &canonical_catalog_fingerprint);

    let composition = r
        .object_opt(obj, "", "composition")
        .map(|c| composition::read(&mut r, c));
    if let Some(c) = &composition {
        if schema_version.is_some_and(|v| v < 3) {
            r.error(
                "CONTRACT_COMPOSITION_SCHEMA",
                composition::PTR,
                format!(
                    "`composition` requires schemaVersion 3, this contract declares {}",
                    schema_version.unwrap_or_default()
                ),
                "TPF's PipelineContractDescriptor rejects a composition below schema 3; regenerate the contract \
                 with a TPF build that writes schema 3",
            );
        }
        composition::validate(&mut r, c);
    }
    let imported_definitions = read_imports(&mut r, obj, "importedDefinitions", schema_version);
    let capability_imports = read_imports(&mut r, obj, "capabilityImports", schema_version);
    let capabilities = read_capabilities(&mut r, obj);

    if let Some(v) = schema_version {
        check_schema_content(
            &mut r,
            v,
            SchemaContent {
                composition: composition.is_some(),
                contributed: has_contributed,
                imports: !imported_definitions.is_empty() || !capability_imports.is_empty(),
                empty_types: canonical_types.is_empty(),
            },
        );
    }
    let hash = match (&contract_version_raw, &contract_hash_raw) {
        (Some(version), Some(hash)) => {
            let computed = text
                .as_ref()
                .map_or_else(|| contract_hash(obj), GsonText::contract_hash);
            Some(check_hash(&mut r, &computed, version, hash, opts))
        }
        _ => None,
    };

    match (
        r.has_errors(),
        schema_version,
        pipeline_id,
        contract_version_raw,
        contract_hash_raw,
        hash,
    ) {
        (
            false,
            Some(schema_version),
            Some(pipeline_id),
            Some(contract_version),
            Some(contract_hash),
            Some(hash),
        ) => Ok(LoadedContract {
            contract: Contract {
                schema_version,
                pipeline_id,
                contract_version,
                contract_hash,
                platform,
                transport,
                module,
                plugin_host,
                runtime_layout,
                steps,
                canonical_types,
                canonical_catalog_fingerprint,
                composition,
                imported_definitions,
                capability_imports,
                capabilities,
            },
            hash,
            warnings: r.diags,
        }),
        _ => Err(Diagnostics(r.diags)),
    }
}

fn read_schema_version(r: &mut FieldReader<'_>, obj: &Map<String, Value>) -> Option<u8> {
    let hint = "TPF writes schemaVersion 1, 2 or 3 and its loader rejects anything else; \
                a newer TPF may need a newer tpf-sfn";
    match obj.get("schemaVersion") {
        None | Some(Value::Null) => {
            r.error(
                "CONTRACT_SCHEMA_VERSION",
                "/schemaVersion",
                "`schemaVersion` is missing",
                hint,
            );
            None
        }
        Some(v) => match v.as_i64() {
            Some(n @ 1..=3) => u8::try_from(n).ok(),
            Some(n) => {
                r.error(
                    "CONTRACT_SCHEMA_VERSION",
                    "/schemaVersion",
                    format!("unsupported schemaVersion {n}; supported: 1, 2, 3"),
                    hint,
                );
                None
            }
            None => {
                r.error(
                    "CONTRACT_SCHEMA_VERSION",
                    "/schemaVersion",
                    format!("`schemaVersion` must be an integer, found {}", json_type(v)),
                    hint,
                );
                None
            }
        },
    }
}

fn read_steps(r: &mut FieldReader<'_>, obj: &Map<String, Value>) -> Vec<Step> {
    let mut steps = Vec::new();
    let steps_ptr = "/steps";
    let present = obj.get("steps").is_some_and(|v| !v.is_null());
    let arr = r.array_opt(obj, "", "steps");
    if present && arr.is_none() {
        return steps;
    }
    let arr = arr.map(Vec::as_slice).unwrap_or_default();
    if arr.is_empty() {
        r.error(
            "CONTRACT_NO_STEPS",
            steps_ptr,
            "the contract has no steps; a contract with no steps cannot run",
            "TPF only writes a contract for a pipeline with steps; this looks like a test fixture or a \
             local fallback contract",
        );
    }
    for (i, v) in arr.iter().enumerate() {
        let p = item(steps_ptr, i);
        let Some(s) = r.element_object(v, &p, "step") else {
            continue;
        };
        if let Some(step) = read_step(r, s, &p, i) {
            steps.push(step);
        }
    }
    steps
}

fn read_step(
    r: &mut FieldReader<'_>,
    s: &Map<String, Value>,
    p: &str,
    position: usize,
) -> Option<Step> {
    r.reject_unknown(s, p, STEP_KEYS, "step");
    let index = r.int_req(s, p, "index");
    if let Some(index) = index {
        if usize::try_from(index).ok() != Some(position) {
            r.error(
                "CONTRACT_STEP_INDEX",
                &child(p, "index"),
                format!("step at position {position} declares index {index}"),
                "TPF numbers steps 0, 1, 2 ... in array order; renumber the steps or restore their order",
            );
        }
    }
    let authored_name = r.str_req(s, p, "authoredName");
    if authored_name.as_ref().is_some_and(|n| n.trim().is_empty()) {
        r.error(
            "CONTRACT_STEP_NAME",
            &child(p, "authoredName"),
            "authoredName is blank",
            "authoredName is the step's YAML `name`; every step needs one",
        );
    }
    let kind = r.str_req(s, p, "kind");
    let cardinality_raw = r.str_req(s, p, "cardinality");
    let cardinality = cardinality_raw.as_deref().and_then(|raw| {
        let c = Cardinality::from_tpf(raw);
        if c.is_none() {
            r.error(
                "CONTRACT_CARDINALITY",
                &child(p, "cardinality"),
                format!("unknown cardinality `{raw}`"),
                format!(
                    "TPF's CardinalitySemantics.fromString accepts (any case) {ACCEPTED_CARDINALITIES}"
                ),
            );
        }
        c
    });
    let input_type_id = r.str_opt(s, p, "inputTypeId").unwrap_or_default();
    let output_type_id = r.str_opt(s, p, "outputTypeId").unwrap_or_default();
    let runtime_class = r.str_opt(s, p, "runtimeClass").unwrap_or_default();
    let client_class = r.str_opt(s, p, "clientClass").unwrap_or_default();
    let paging = read_paging(r, s, p);
    let deferred_completion = r
        .object_opt(s, p, "deferredCompletion")
        .filter(|d| !d.is_empty())
        .and_then(|d| read_deferred(r, d, &child(p, "deferredCompletion")));
    let await_transport = match r.str_opt(s, p, "awaitTransport") {
        Some(raw) => Some(parse_transport(r, &child(p, "awaitTransport"), &raw)),
        None => deferred_completion
            .as_ref()
            .filter(|d| !d.transport_type.trim().is_empty())
            .map(|d| {
                let ptr = child(&child(p, "deferredCompletion"), "transportType");
                parse_transport(r, &ptr, &d.transport_type)
            }),
    };

    let step = Step {
        index: u32::try_from(index?).ok()?,
        authored_name: authored_name?,
        kind: kind?,
        cardinality_raw: cardinality_raw?,
        cardinality: cardinality?,
        input_type_id,
        output_type_id,
        runtime_class,
        client_class,
        await_transport,
        paging,
        deferred_completion,
    };
    if let Some(d) = &step.deferred_completion {
        if !d.final_output_type_id.is_empty() && d.final_output_type_id != step.output_type_id {
            r.warning(
                "CONTRACT_DEFERRED_OUTPUT",
                &child(p, "outputTypeId"),
                format!(
                    "step `{}` has outputTypeId `{}` but its deferredCompletion's finalOutputTypeId is `{}`",
                    step.authored_name, step.output_type_id, d.final_output_type_id
                ),
                "TPF's generator writes a deferred step's final output type in both places; the file was \
                 probably edited",
            );
        }
    }
    if step.await_transport.is_some() && !step.is_await() {
        r.warning(
            "CONTRACT_AWAIT_TRANSPORT_UNUSED",
            &child(p, "awaitTransport"),
            format!(
                "step `{}` has kind `{}` but declares an awaitTransport",
                step.authored_name, step.kind
            ),
            "awaitTransport only means something on `kind: await` steps; it is ignored here",
        );
    }
    Some(step)
}

/// `paging` (today's TPF `PipelineStepPaging`, which requires `maxRecords` ≥ 1).
fn read_paging(r: &mut FieldReader<'_>, s: &Map<String, Value>, p: &str) -> Option<Paging> {
    let paging = r.object_opt(s, p, "paging")?;
    let ptr = child(p, "paging");
    r.reject_unknown(paging, &ptr, &["maxRecords"], "paging");
    let n = r.int_req(paging, &ptr, "maxRecords")?;
    match u64::try_from(n) {
        Ok(max_records) if max_records >= 1 => Some(Paging { max_records }),
        _ => {
            r.error(
                "CONTRACT_PAGING",
                &child(&ptr, "maxRecords"),
                format!("paging.maxRecords is {n}"),
                "TPF's PipelineStepPaging requires maxRecords of at least 1",
            );
            None
        }
    }
}

/// `deferredCompletion`: TPF's runtime keeps it as an untyped map, so keys are not policed;
/// the ones the driver and the model need are read and checked.
fn read_deferred(
    r: &mut FieldReader<'_>,
    d: &Map<String, Value>,
    p: &str,
) -> Option<DeferredCompletion> {
    let timeout = r.str_req(d, p, "timeout");
    let timeout_ms = timeout.as_deref().and_then(|t| {
        let ms = java_duration_ms(t.trim()).filter(|ms| *ms > 0);
        if ms.is_none() {
            r.error(
                "CONTRACT_AWAIT_TIMEOUT",
                &child(p, "timeout"),
                format!("deferredCompletion.timeout `{t}` is not a positive duration"),
                "TPF's generator writes Java Duration.toString() text such as PT30M or PT48H, and its \
                 await descriptor needs a positive timeout",
            );
        }
        ms
    });
    let correlation_strategy = r.str_opt(d, p, "correlationStrategy").unwrap_or_default();
    let idempotency_key_fields = r
        .str_array_opt(d, p, "idempotencyKeyFields")
        .unwrap_or_default();
    let transport_type = r.str_opt(d, p, "transportType").unwrap_or_default();
    let operation_output_type_id = r.str_opt(d, p, "operationOutputTypeId").unwrap_or_default();
    let final_output_type_id = r.str_opt(d, p, "finalOutputTypeId").unwrap_or_default();
    let callback = r.object_opt(d, p, "callback").is_some();
    let mode = r.str_opt(d, p, "mode");
    let fingerprint = r.str_opt(d, p, "fingerprint").unwrap_or_default();
    if !fingerprint.is_empty() {
        let computed = deferred_fingerprint(d);
        if fingerprint != computed {
            r.warning(
                "CONTRACT_FINGERPRINT",
                &child(p, "fingerprint"),
                format!("deferredCompletion fingerprint is `{fingerprint}` but the object hashes to `{computed}`"),
                "regenerate the contract with TPF's build; hand edits leave stale fingerprints",
            );
        }
    }
    Some(DeferredCompletion {
        timeout: timeout?,
        timeout_ms: timeout_ms?,
        correlation_strategy,
        idempotency_key_fields,
        transport_type,
        operation_output_type_id,
        final_output_type_id,
        callback,
        mode,
        fingerprint,
    })
}

/// TPF's deferred-completion fingerprint: sha256 of the compact Gson text of the object without
/// `fingerprint`, keys sorted (TPF builds it as a sorted map, nested maps too).
pub fn deferred_fingerprint(d: &Map<String, Value>) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                // Java's String order is UTF-16 code-unit order; for the ASCII keys TPF writes
                // it is byte order.
                keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&o[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut without = d.clone();
    without.remove("fingerprint");
    fingerprint(&sorted(&Value::Object(without)))
}

/// `importedDefinitions` / `capabilityImports`: arrays of objects, only at schema 3.
fn read_imports(
    r: &mut FieldReader<'_>,
    obj: &Map<String, Value>,
    key: &str,
    schema_version: Option<u8>,
) -> Vec<Value> {
    let Some(items) = r.array_opt(obj, "", key) else {
        return Vec::new();
    };
    let ptr = child("", key);
    let what = if key == "importedDefinitions" {
        "imported definition"
    } else {
        "capability import"
    };
    let out: Vec<Value> = items
        .iter()
        .enumerate()
        .filter_map(|(i, v)| r.element_object(v, &item(&ptr, i), what).map(|_| v.clone()))
        .collect();
    if !out.is_empty() && schema_version.is_some_and(|v| v < 3) {
        let message = if key == "importedDefinitions" {
            "Imported pipeline definitions require contract schemaVersion 3"
        } else {
            "Capability imports require contract schemaVersion 3"
        };
        r.error(
            "CONTRACT_IMPORTS_SCHEMA",
            &ptr,
            format!(
                "{message}; this contract declares {}",
                schema_version.unwrap_or_default()
            ),
            "TPF's PipelineContractDescriptor refuses this below schema 3 with the same message; \
             regenerate the contract with a TPF build that writes schema 3",
        );
    }
    out
}

fn parse_transport(r: &mut FieldReader<'_>, ptr: &str, raw: &str) -> AwaitTransport {
    match raw.trim().to_ascii_lowercase().as_str() {
        "interaction-api" => AwaitTransport::InteractionApi,
        "webhook" => AwaitTransport::Webhook,
        "kafka" => AwaitTransport::Kafka,
        "sqs" => AwaitTransport::Sqs,
        _ => {
            r.warning(
                "CONTRACT_AWAIT_TRANSPORT_UNKNOWN",
                ptr,
                format!("unknown await transport `{raw}`"),
                "known transports are interaction-api, webhook, kafka and sqs; the driver still waits, but \
                 cannot say whether completions arrive by callback or broker",
            );
            AwaitTransport::Other(raw.to_string())
        }
    }
}

/// Returns the catalogue and whether any entry carries a connector-contributed identity.
/// The fingerprint of the value at `path`, from the file's text when there is one.
fn text_fingerprint(text: Option<&GsonText>, path: &[&str], value: &Value) -> String {
    match text.and_then(|t| t.value(path)) {
        Some(bytes) => sha256_hex(bytes),
        None => fingerprint(value),
    }
}

fn read_canonical_types(
    r: &mut FieldReader<'_>,
    obj: &Map<String, Value>,
    text: Option<&GsonText>,
) -> (indexmap::IndexMap<String, Value>, bool) {
    let mut out = indexmap::IndexMap::new();
    let mut contributed = false;
    let Some(types) = r.object_opt(obj, "", "canonicalTypes") else {
        return (out, false);
    };
    let base = "/canonicalTypes";
    for (name, v) in types {
        let p = child(base, name);
        let Some(entry) = r.element_object(v, &p, "canonical type") else {
            continue;
        };
        contributed |= entry
            .get("contributedIdentity")
            .is_some_and(|c| !c.is_null());
        if let (Some(Value::String(declared)), Some(definition)) =
            (entry.get("definitionFingerprint"), entry.get("definition"))
        {
            let computed =
                text_fingerprint(text, &["canonicalTypes", name, "definition"], definition);
            if *declared != computed {
                r.warning(
                    "CONTRACT_FINGERPRINT",
                    &child(&p, "definitionFingerprint"),
                    format!("definitionFingerprint of `{name}` is `{declared}` but the definition hashes to `{computed}`"),
                    "regenerate the contract with TPF's build; hand edits leave stale fingerprints",
                );
            }
        }
        out.insert(name.clone(), v.clone());
    }
    (out, contributed)
}

fn check_catalog_fingerprint(
    r: &mut FieldReader<'_>,
    obj: &Map<String, Value>,
    text: Option<&GsonText>,
    declared: &str,
) {
    if declared.is_empty() {
        return;
    }
    let types = obj
        .get("canonicalTypes")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let computed = text_fingerprint(text, &["canonicalTypes"], &types);
    if declared != computed {
        r.warning(
            "CONTRACT_FINGERPRINT",
            "/canonicalCatalogFingerprint",
            format!("canonicalCatalogFingerprint is `{declared}` but canonicalTypes hashes to `{computed}`"),
            "regenerate the contract with TPF's build; hand edits leave stale fingerprints",
        );
    }
}

fn read_capabilities(r: &mut FieldReader<'_>, obj: &Map<String, Value>) -> Capabilities {
    let defaults = default_capabilities();
    let Some(c) = r.object_opt(obj, "", "capabilities") else {
        return defaults;
    };
    let p = "/capabilities";
    r.reject_unknown(c, p, CAPABILITY_KEYS, "capabilities");
    Capabilities {
        local_transition_execution: r
            .bool_opt(c, p, "localTransitionExecution")
            .unwrap_or(defaults.local_transition_execution),
        transition_worker_protocols: r
            .str_array_opt(c, p, "transitionWorkerProtocols")
            .unwrap_or(defaults.transition_worker_protocols),
    }
}

/// What decides the schema version TPF's generator writes.
struct SchemaContent {
    composition: bool,
    contributed: bool,
    /// A non-empty `importedDefinitions` or `capabilityImports` (today's TPF).
    imports: bool,
    empty_types: bool,
}

/// TPF derives schemaVersion from content. A mismatch is legal for the loader but means
/// the file was not written by TPF's generator, so it is worth a look.
fn check_schema_content(r: &mut FieldReader<'_>, declared: u8, content: SchemaContent) {
    let SchemaContent {
        composition,
        contributed,
        imports,
        empty_types,
    } = content;
    let expected = if composition || contributed || imports {
        3
    } else if empty_types {
        1
    } else {
        2
    };
    if declared != expected {
        let why = if composition {
            "it has a composition block"
        } else if contributed {
            "a canonical type has a contributedIdentity"
        } else if imports {
            "it has imported definitions or capability imports"
        } else if empty_types {
            "canonicalTypes is empty and there is no composition"
        } else {
            "it has canonicalTypes but no composition or contributed identity"
        };
        r.warning(
            "CONTRACT_SCHEMA_CONTENT",
            "/schemaVersion",
            format!("schemaVersion is {declared}, but TPF's generator would write {expected} because {why}"),
            "the file was probably edited or produced by another tool; the contract hash still decides identity",
        );
    }
}

fn check_hash(
    r: &mut FieldReader<'_>,
    computed: &str,
    version: &str,
    hash: &str,
    opts: ContractOptions,
) -> HashCheck {
    let computed = computed.to_owned();
    let hint_tail = if opts.allow_unverified_hash {
        "accepted because of --allow-unverified-hash; the manifest records the contract as unverified"
    } else {
        "regenerate the contract with TPF's build, or pass --allow-unverified-hash (test fixtures only)"
    };
    let mut ok = true;
    if hash != computed {
        ok = false;
        let message = format!(
            "contractHash does not match the contract: expected `{hash}`, computed `{computed}`"
        );
        let hint = format!(
            "the hash covers every key except contractVersion/contractHash, so any edit changes it; {hint_tail}"
        );
        push_hash(r, opts, "/contractHash", message, hint);
    }
    let want_version = contract_version(hash);
    if version != want_version {
        ok = false;
        let message = format!(
            "contractVersion is `{version}` but TPF derives `{want_version}` from contractHash"
        );
        let hint = format!("contractVersion must be \"sha256:\" + contractHash; {hint_tail}");
        push_hash(r, opts, "/contractVersion", message, hint);
    }
    if ok {
        HashCheck::Verified
    } else {
        HashCheck::Unverified {
            expected: hash.to_string(),
            computed,
        }
    }
}

fn push_hash(
    r: &mut FieldReader<'_>,
    opts: ContractOptions,
    ptr: &str,
    message: String,
    hint: String,
) {
    if opts.allow_unverified_hash {
        r.warning("CONTRACT_HASH_MISMATCH", ptr, message, hint);
    } else {
        r.error("CONTRACT_HASH_MISMATCH", ptr, message, hint);
    }
}
