//! Writes the hand-designed example contracts in `examples/contracts/`.
//!
//! Run once with `cargo run -p tpf-sfn-compiler --example gen_contracts` and commit the output.
//! The files are built the way TPF's generator builds them (key order, Gson-compatible hash,
//! `contractVersion = "sha256:" + contractHash`, fingerprints), using the compiler's own hash
//! function so the loader's verification is exercised end to end. Output is deterministic.

use std::error::Error;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use tpf_sfn_compiler::contract::{contract_hash, contract_version, fingerprint};

struct StepSpec {
    name: String,
    /// ASCII PascalCase stem for the generated Java class names.
    code: String,
    kind: &'static str,
    cardinality: &'static str,
    input: String,
    output: String,
    transport: Option<&'static str>,
}

fn internal(name: &str, code: &str, input: &str, output: &str) -> StepSpec {
    StepSpec {
        name: name.to_string(),
        code: code.to_string(),
        kind: "internal",
        cardinality: "ONE_TO_ONE",
        input: input.to_string(),
        output: output.to_string(),
        transport: None,
    }
}

fn awaiting(
    name: &str,
    code: &str,
    input: &str,
    output: &str,
    transport: &'static str,
) -> StepSpec {
    StepSpec {
        kind: "await",
        transport: Some(transport),
        ..internal(name, code, input, output)
    }
}

struct ContractSpec {
    file: &'static str,
    pipeline_id: &'static str,
    transport: &'static str,
    module: &'static str,
    layout: Option<&'static str>,
    steps: Vec<StepSpec>,
    canonical_types: Value,
    composition: Option<Value>,
}

fn snake(code: &str) -> String {
    let mut out = String::new();
    for (i, c) in code.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn step_json(pkg: &str, transport: &str, index: usize, s: &StepSpec) -> Value {
    let suffix = match transport {
        "GRPC" => "GrpcClientStep",
        "LOCAL" => "LocalClientStep",
        _ => "RestClientStep",
    };
    let (runtime, client) = if s.kind == "await" {
        let c = format!("{pkg}.service.pipeline.Process{}AwaitClientStep", s.code);
        (c.clone(), c)
    } else {
        let base = format!("{pkg}.{}.service", snake(&s.code));
        (
            format!("{base}.Process{}Service", s.code),
            format!("{base}.pipeline.Process{}{suffix}", s.code),
        )
    };
    let mut m = Map::new();
    m.insert("index".into(), json!(index));
    m.insert("authoredName".into(), json!(s.name));
    m.insert("kind".into(), json!(s.kind));
    m.insert("cardinality".into(), json!(s.cardinality));
    m.insert(
        "inputTypeId".into(),
        json!(format!("{pkg}.domain.{}", s.input)),
    );
    m.insert(
        "outputTypeId".into(),
        json!(format!("{pkg}.domain.{}", s.output)),
    );
    m.insert("runtimeClass".into(), json!(runtime));
    m.insert("clientClass".into(), json!(client));
    if let Some(t) = s.transport {
        m.insert("awaitTransport".into(), json!(t));
    }
    Value::Object(m)
}

/// Builds the document in TPF's key order, hashes it without the identity keys, then inserts
/// `contractVersion`/`contractHash` after `pipelineId` as TPF does.
fn build(spec: &ContractSpec) -> Value {
    let contributed = spec
        .canonical_types
        .as_object()
        .is_some_and(|t| t.values().any(|v| v.get("contributedIdentity").is_some()));
    let empty_types = spec.canonical_types.as_object().is_none_or(Map::is_empty);
    let schema = if spec.composition.is_some() || contributed {
        3
    } else if empty_types {
        1
    } else {
        2
    };
    let mut m = Map::new();
    m.insert("schemaVersion".into(), json!(schema));
    m.insert("pipelineId".into(), json!(spec.pipeline_id));
    m.insert("platform".into(), json!("COMPUTE"));
    m.insert("transport".into(), json!(spec.transport));
    m.insert("module".into(), json!(spec.module));
    m.insert("pluginHost".into(), json!(false));
    if let Some(l) = spec.layout {
        m.insert("runtimeLayout".into(), json!(l));
    }
    let steps: Vec<Value> = spec
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| step_json(spec.pipeline_id, spec.transport, i, s))
        .collect();
    m.insert("steps".into(), Value::Array(steps));
    m.insert("canonicalTypes".into(), spec.canonical_types.clone());
    m.insert(
        "canonicalCatalogFingerprint".into(),
        json!(fingerprint(&spec.canonical_types)),
    );
    if let Some(c) = &spec.composition {
        m.insert("composition".into(), c.clone());
    }
    m.insert(
        "capabilities".into(),
        json!({"localTransitionExecution": true, "transitionWorkerProtocols": ["local", "rest", "grpc", "sqs"]}),
    );
    let hash = contract_hash(&m);
    let mut out = Map::new();
    for (k, v) in m {
        let after_pipeline_id = k == "pipelineId";
        out.insert(k, v);
        if after_pipeline_id {
            out.insert("contractVersion".into(), json!(contract_version(&hash)));
            out.insert("contractHash".into(), json!(hash));
        }
    }
    Value::Object(out)
}

fn scalar(id: &str) -> Value {
    json!({"id": id, "kind": "scalar"})
}

fn named(id: &str) -> Value {
    json!({"id": id, "kind": "named"})
}

fn field(name: &str, ty: Value) -> Value {
    json!({"name": name, "type": ty})
}

/// One catalogue entry with TPF's sorted keys and its definition fingerprint.
fn record(pkg: &str, id: &str, mut fields: Vec<Value>) -> (String, Value) {
    fields.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let definition = json!({"fields": fields, "id": id, "kind": "record"});
    type_entry(pkg, id, definition)
}

fn type_entry(pkg: &str, id: &str, definition: Value) -> (String, Value) {
    let fp = fingerprint(&definition);
    (
        id.to_string(),
        json!({"definition": definition, "definitionFingerprint": fp, "runtimeClass": format!("{pkg}.domain.{id}")}),
    )
}

fn catalogue(mut entries: Vec<(String, Value)>) -> Value {
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Object(entries.into_iter().collect())
}

fn multi_await() -> ContractSpec {
    ContractSpec {
        file: "multi-await",
        pipeline_id: "org.example.loan",
        transport: "REST",
        module: "orchestrator-svc",
        layout: Some("MONOLITH"),
        steps: vec![
            internal(
                "Receive Application",
                "ReceiveApplication",
                "LoanRequest",
                "LoanApplication",
            ),
            awaiting(
                "Await Underwriter Review",
                "AwaitUnderwriterReview",
                "LoanApplication",
                "UnderwriterReview",
                "interaction-api",
            ),
            internal(
                "Request Credit Check",
                "RequestCreditCheck",
                "UnderwriterReview",
                "CreditCheckRequest",
            ),
            awaiting(
                "Await Credit Bureau",
                "AwaitCreditBureau",
                "CreditCheckRequest",
                "CreditReport",
                "webhook",
            ),
            internal("Price Offer", "PriceOffer", "CreditReport", "LoanOffer"),
            awaiting(
                "Await Ledger Booking",
                "AwaitLedgerBooking",
                "LoanOffer",
                "BookingConfirmation",
                "kafka",
            ),
            internal(
                "Notify Applicant",
                "NotifyApplicant",
                "BookingConfirmation",
                "LoanOutcome",
            ),
        ],
        canonical_types: json!({}),
        composition: None,
    }
}

fn sqs_await() -> ContractSpec {
    ContractSpec {
        file: "sqs-await",
        pipeline_id: "org.example.shipping",
        transport: "GRPC",
        module: "orchestrator-svc",
        layout: Some("PIPELINE_RUNTIME"),
        steps: vec![
            internal(
                "Prepare Shipment",
                "PrepareShipment",
                "ShipmentRequest",
                "ShipmentLabel",
            ),
            awaiting(
                "Await Carrier Pickup",
                "AwaitCarrierPickup",
                "ShipmentLabel",
                "PickupConfirmation",
                "sqs",
            ),
            internal(
                "Close Shipment",
                "CloseShipment",
                "PickupConfirmation",
                "ShipmentRecord",
            ),
        ],
        canonical_types: json!({}),
        composition: None,
    }
}

fn fan_out() -> ContractSpec {
    let pkg = "org.example.payments";
    let types = catalogue(vec![
        record(
            pkg,
            "CsvPaymentsInputFile",
            vec![
                field("filepath", scalar("path")),
                field("csvFolderPath", scalar("path")),
            ],
        ),
        record(
            pkg,
            "PaymentRecord",
            vec![
                field("csvId", scalar("string")),
                field("recipient", scalar("string")),
                field("amount", scalar("decimal")),
                field("currency", scalar("currency")),
            ],
        ),
        record(
            pkg,
            "PaymentStatus",
            vec![
                field("csvId", scalar("string")),
                field("reference", scalar("string")),
            ],
        ),
        record(
            pkg,
            "PaymentOutput",
            vec![
                field("csvId", scalar("string")),
                field("status", named("PaymentStatus")),
            ],
        ),
        record(
            pkg,
            "PaymentFileSummary",
            vec![
                field("filepath", scalar("path")),
                field("paid", scalar("int64")),
                field(
                    "totals",
                    json!({"key": scalar("currency"), "kind": "map", "value": scalar("decimal")}),
                ),
            ],
        ),
    ]);
    let mut expand = internal(
        "Process Csv Payments Input",
        "ProcessCsvPaymentsInput",
        "CsvPaymentsInputFile",
        "PaymentRecord",
    );
    expand.cardinality = "EXPANSION";
    let mut reduce = internal(
        "Summarise Payment File",
        "SummarisePaymentFile",
        "PaymentOutput",
        "PaymentFileSummary",
    );
    reduce.cardinality = "REDUCTION";
    ContractSpec {
        file: "fan-out",
        pipeline_id: pkg,
        transport: "GRPC",
        module: "orchestrator-svc",
        layout: Some("PIPELINE_RUNTIME"),
        steps: vec![
            expand,
            awaiting(
                "Await Payment Provider",
                "AwaitPaymentProvider",
                "PaymentRecord",
                "PaymentStatus",
                "kafka",
            ),
            internal(
                "Finalize Payment Output",
                "FinalizePaymentOutput",
                "PaymentStatus",
                "PaymentOutput",
            ),
            reduce,
        ],
        canonical_types: types,
        composition: None,
    }
}

/// The CSV-payments lane as TPF ships it: no reduction after the items, so each item's child
/// execution runs to the end and the parent is released at the step count.
fn fan_out_no_aggregate() -> ContractSpec {
    let mut spec = fan_out();
    spec.file = "fan-out-no-aggregate";
    spec.pipeline_id = "org.example.payments.lane";
    spec.steps.pop();
    spec
}

fn node(index: usize, id: &str, kind: &str, input: &str, output: &str, target: &str) -> Value {
    json!({
        "index": index,
        "nodeId": id,
        "kind": kind,
        "inputContractId": input,
        "outputContractId": output,
        "cardinality": "ONE_TO_ONE",
        "targetDefinitionId": target,
        "acceptedContractIds": [input],
        "terminal": false
    })
}

fn cont(node_id: &str, kind: &str, next: &str) -> Value {
    json!({"nodeId": node_id, "kind": kind, "nextNodeId": next})
}

fn definition(
    id: &str,
    input: &str,
    output: &str,
    nodes: Vec<Value>,
    continuations: Vec<Value>,
) -> Value {
    let basis = json!({
        "definitionId": id,
        "inputContractId": input,
        "outputContractId": output,
        "nodes": nodes,
        "continuations": continuations
    });
    json!({
        "definitionId": id,
        "definitionFingerprint": fingerprint(&basis),
        "inputContractId": input,
        "outputContractId": output,
        "nodes": basis["nodes"],
        "continuations": basis["continuations"]
    })
}

fn composition() -> ContractSpec {
    let pkg = "org.example.orders";
    let types = catalogue(vec![
        record(
            pkg,
            "Order",
            vec![
                field("orderId", scalar("uuid")),
                field("sku", scalar("string")),
            ],
        ),
        record(
            pkg,
            "EnrichedOrder",
            vec![
                field("order", named("Order")),
                field("priceList", scalar("string")),
            ],
        ),
        record(
            pkg,
            "PricedOrder",
            vec![
                field("order", named("EnrichedOrder")),
                field("total", scalar("decimal")),
            ],
        ),
        record(
            pkg,
            "OrderReceipt",
            vec![
                field("orderId", scalar("uuid")),
                field("total", scalar("decimal")),
            ],
        ),
    ]);
    let enrich = definition(
        "enrich-order",
        "Order",
        "PricedOrder",
        vec![
            node(
                0,
                "lookup-price-list",
                "direct",
                "Order",
                "EnrichedOrder",
                "",
            ),
            node(
                1,
                "price-order",
                "direct",
                "EnrichedOrder",
                "PricedOrder",
                "",
            ),
        ],
        vec![
            cont("lookup-price-list", "NEXT_LOCAL", "price-order"),
            cont("price-order", "RETURN", ""),
        ],
    );
    let main = definition(
        "main",
        "Order",
        "OrderReceipt",
        vec![
            node(0, "validate-order", "direct", "Order", "Order", ""),
            node(
                1,
                "enrich",
                "pipeline",
                "Order",
                "PricedOrder",
                "enrich-order",
            ),
            node(
                2,
                "issue-receipt",
                "direct",
                "PricedOrder",
                "OrderReceipt",
                "",
            ),
        ],
        vec![
            cont("validate-order", "NEXT_LOCAL", "enrich"),
            cont("enrich", "NEXT_LOCAL", "issue-receipt"),
            cont("issue-receipt", "ROOT_TERMINAL", ""),
        ],
    );
    ContractSpec {
        file: "composition",
        pipeline_id: pkg,
        transport: "LOCAL",
        module: "orchestrator-svc",
        layout: Some("MONOLITH"),
        steps: vec![
            internal("Validate Order", "ValidateOrder", "Order", "Order"),
            internal(
                "Lookup Price List",
                "LookupPriceList",
                "Order",
                "EnrichedOrder",
            ),
            internal("Price Order", "PriceOrder", "EnrichedOrder", "PricedOrder"),
            internal(
                "Issue Receipt",
                "IssueReceipt",
                "PricedOrder",
                "OrderReceipt",
            ),
        ],
        canonical_types: types,
        composition: Some(json!({"rootDefinitionId": "main", "definitions": [enrich, main]})),
    }
}

fn thousand_steps() -> ContractSpec {
    const TRANSPORTS: [&str; 4] = ["interaction-api", "webhook", "kafka", "sqs"];
    let steps = (0..1000)
        .map(|i| {
            let input = format!("Stage{i:04}");
            let output = format!("Stage{:04}", i + 1);
            if i % 100 == 99 {
                let t = TRANSPORTS[(i / 100) % TRANSPORTS.len()];
                awaiting(
                    &format!("Await Gate {i:04}"),
                    &format!("AwaitGate{i:04}"),
                    &input,
                    &output,
                    t,
                )
            } else {
                internal(
                    &format!("Transform {i:04}"),
                    &format!("Transform{i:04}"),
                    &input,
                    &output,
                )
            }
        })
        .collect();
    ContractSpec {
        file: "thousand-steps",
        pipeline_id: "org.example.longhaul",
        transport: "REST",
        module: "orchestrator-svc",
        layout: Some("MODULAR"),
        steps,
        canonical_types: json!({}),
        composition: None,
    }
}

fn unicode_names() -> ContractSpec {
    ContractSpec {
        file: "unicode-names",
        pipeline_id: "org.example.intl",
        transport: "REST",
        module: "orchestrator-svc",
        layout: Some("MONOLITH"),
        steps: vec![
            internal(
                "Prüfe Bestellung",
                "PruefeBestellung",
                "Bestellung",
                "GepruefteBestellung",
            ),
            internal(
                "注文を検証する",
                "ChuumonKensho",
                "GepruefteBestellung",
                "Chuumon",
            ),
            awaiting(
                "Attendre la décision du café ☕",
                "AttendreDecision",
                "Chuumon",
                "Decision",
                "interaction-api",
            ),
            internal(
                "Envío confirmado 🚀",
                "EnvioConfirmado",
                "Decision",
                "Envio",
            ),
        ],
        canonical_types: json!({}),
        composition: None,
    }
}

/// Exactly 200 characters: `stem tail`, padded with a fixed phrase, never ending in a space.
fn long_name(stem: &str, tail: &str) -> String {
    let mut name = format!("{stem} {tail}");
    while name.chars().count() < 200 {
        name.push_str(" and record the outcome for the audit trail");
    }
    let mut name: String = name.chars().take(199).collect();
    name.push('.');
    name
}

fn long_names() -> ContractSpec {
    // The two awaits share their first 80+ characters, so names truncated to 80 collide.
    let shared =
        "Await Approval From The Regional Compliance Office For High Value Cross Border Payments";
    ContractSpec {
        file: "long-names",
        pipeline_id: "org.example.compliance",
        transport: "REST",
        module: "orchestrator-svc",
        layout: Some("MONOLITH"),
        steps: vec![
            internal(
                &long_name(
                    "Validate Incoming Cross Border Payment Instruction",
                    "against sanctions lists",
                ),
                "ValidateInstruction",
                "PaymentInstruction",
                "ValidatedInstruction",
            ),
            awaiting(
                &long_name(shared, "in the European Union"),
                "AwaitComplianceEu",
                "ValidatedInstruction",
                "EuClearance",
                "interaction-api",
            ),
            internal(
                &long_name(
                    "Prepare Secondary Review Package For The Partner Jurisdiction",
                    "with translated documents",
                ),
                "PrepareSecondaryReview",
                "EuClearance",
                "ReviewPackage",
            ),
            awaiting(
                &long_name(shared, "in the United States"),
                "AwaitComplianceUs",
                "ReviewPackage",
                "UsClearance",
                "webhook",
            ),
            internal(
                &long_name(
                    "Release Payment To The Settlement Network After Both Clearances",
                    "have been granted",
                ),
                "ReleasePayment",
                "UsClearance",
                "SettledPayment",
            ),
        ],
        canonical_types: json!({}),
        composition: None,
    }
}

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("examples")
        .join("contracts")
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = out_dir();
    std::fs::create_dir_all(&dir)?;
    for spec in [
        multi_await(),
        sqs_await(),
        fan_out(),
        fan_out_no_aggregate(),
        composition(),
        thousand_steps(),
        unicode_names(),
        long_names(),
    ] {
        let doc = build(&spec);
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        let path = dir.join(format!("{}.pipeline-contract.json", spec.file));
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
