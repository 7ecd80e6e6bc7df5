//! A contract of any length in the shape of `examples/contracts/thousand-steps`: internal steps
//! with an await every 100th step, cycling through the await transports. Built in memory so no
//! multi-megabyte file is checked in; the hash is computed the way the example generator does,
//! so the loader verifies it like any contract TPF wrote.

use serde_json::{json, Map, Value};
use tpf_sfn_compiler::contract::{contract_hash, contract_version};

pub const THOUSAND: &str =
    include_str!("../../../examples/contracts/thousand-steps.pipeline-contract.json");
const TRANSPORTS: [&str; 4] = ["interaction-api", "webhook", "kafka", "sqs"];

fn step(pkg: &str, i: usize) -> Value {
    let input = format!("{pkg}.domain.Stage{i:04}");
    let output = format!("{pkg}.domain.Stage{:04}", i + 1);
    if i % 100 == 99 {
        let class = format!("{pkg}.service.pipeline.ProcessAwaitGate{i:04}AwaitClientStep");
        json!({
            "index": i,
            "authoredName": format!("Await Gate {i:04}"),
            "kind": "await",
            "cardinality": "ONE_TO_ONE",
            "inputTypeId": input,
            "outputTypeId": output,
            "runtimeClass": class,
            "clientClass": class,
            "awaitTransport": TRANSPORTS[(i / 100) % TRANSPORTS.len()],
        })
    } else {
        let base = format!("{pkg}.transform{i:04}.service");
        json!({
            "index": i,
            "authoredName": format!("Transform {i:04}"),
            "kind": "internal",
            "cardinality": "ONE_TO_ONE",
            "inputTypeId": input,
            "outputTypeId": output,
            "runtimeClass": format!("{base}.ProcessTransform{i:04}Service"),
            "clientClass": format!("{base}.pipeline.ProcessTransform{i:04}RestClientStep"),
        })
    }
}

/// The contract file's bytes for `steps` steps (`steps` = 1,000 gives the example's content).
pub fn long_contract(steps: usize) -> Vec<u8> {
    let Ok(Value::Object(example)) = serde_json::from_str::<Value>(THOUSAND) else {
        panic!("the thousand-steps example is a JSON object");
    };
    let pkg = example["pipelineId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut body = Map::new();
    for (k, v) in example {
        match k.as_str() {
            "contractVersion" | "contractHash" => {}
            "steps" => {
                body.insert(k, (0..steps).map(|i| step(&pkg, i)).collect());
            }
            _ => {
                body.insert(k, v);
            }
        }
    }
    let hash = contract_hash(&body);
    let mut doc = Map::new();
    for (k, v) in body {
        let after = k == "pipelineId";
        doc.insert(k, v);
        if after {
            doc.insert("contractVersion".into(), json!(contract_version(&hash)));
            doc.insert("contractHash".into(), json!(hash));
        }
    }
    let mut text = serde_json::to_vec_pretty(&Value::Object(doc)).unwrap_or_default();
    text.push(b'\n');
    text
}
