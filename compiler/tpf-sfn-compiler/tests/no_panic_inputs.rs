//! The input loaders never panic, whatever they are handed.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value};

use tpf_sfn_compiler::config::DriverConfig;
use tpf_sfn_compiler::contract::{load_contract, ContractOptions};
use tpf_sfn_compiler::release::{load_release, resolve_identity};

const RESTAURANT: &str =
    include_str!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");
const COMPOSITION: &str =
    include_str!("../../../examples/contracts/composition.pipeline-contract.json");
const RELEASE: &str =
    include_str!("../../../examples/contracts/restaurant-approval.pipeline-release.json");

/// Keys the loaders know, so generated objects reach past the unknown-key check.
const KEYS: &[&str] = &[
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
    "capabilities",
    "index",
    "authoredName",
    "kind",
    "cardinality",
    "inputTypeId",
    "outputTypeId",
    "runtimeClass",
    "clientClass",
    "awaitTransport",
    "rootDefinitionId",
    "definitions",
    "definitionId",
    "definitionFingerprint",
    "inputContractId",
    "outputContractId",
    "nodes",
    "continuations",
    "nodeId",
    "targetDefinitionId",
    "acceptedContractIds",
    "terminal",
    "nextNodeId",
    "releaseVersion",
    "artifacts",
    "artifactId",
    "uri",
    "digest",
    "stepIds",
    "localTransitionExecution",
    "transitionWorkerProtocols",
];

const STRINGS: &[&str] = &[
    "",
    " ",
    "await",
    "internal",
    "ONE_TO_ONE",
    "expansion",
    "REDUCTION",
    "NEXT_LOCAL",
    "RETURN",
    "ROOT_TERMINAL",
    "pipeline",
    "direct",
    "main",
    "n0",
    "n1",
    "kafka",
    "sqs",
    "jar",
    "sha256:",
    "\u{2028}",
    "é中🚀",
    "~/",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![3 => prop::sample::select(KEYS).prop_map(String::from), 1 => ".{0,8}"]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(STRINGS).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every JSON pointer in `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(Index),
    Replace(Index, Value),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Delete),
        (any::<Index>(), json_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
    ]
}

fn apply(doc: &mut Value, m: &Mutation) {
    let mut ptrs = Vec::new();
    pointers(doc, String::new(), &mut ptrs);
    if ptrs.is_empty() {
        return;
    }
    let (Mutation::Delete(i) | Mutation::Replace(i, _)) = m;
    let target = i.get(&ptrs).clone();
    match m {
        Mutation::Replace(_, v) => {
            if let Some(slot) = doc.pointer_mut(&target) {
                *slot = v.clone();
            }
        }
        Mutation::Delete(_) => {
            let (parent, last) = target.rsplit_once('/').unwrap_or(("", ""));
            let last = last.replace("~1", "/").replace("~0", "~");
            match doc.pointer_mut(parent) {
                Some(Value::Object(o)) => {
                    o.shift_remove(&last);
                }
                Some(Value::Array(a)) => {
                    if let Ok(n) = last.parse::<usize>() {
                        if n < a.len() {
                            a.remove(n);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn exercise_json(bytes: &[u8]) {
    for allow in [false, true] {
        let contract = load_contract(
            "fuzz.json",
            bytes,
            ContractOptions {
                allow_unverified_hash: allow,
            },
        );
        if let Ok(release) = load_release("fuzz.json", bytes) {
            if let Ok(c) = &contract {
                let _ = resolve_identity(&c.contract, Some(("fuzz.json", &release)));
            }
        }
    }
}

fn exercise_toml(text: &str) {
    if let Ok(cfg) = DriverConfig::from_toml("fuzz.toml", text) {
        let _ = cfg.check("fuzz.toml");
    }
}

const TOML_VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "18446744073709551615",
    "nan",
    "-inf",
    "0.5",
    "\"\"",
    "\"x\"",
    "true",
    "[]",
    "{}",
    "\"OFF\"",
    "\"ALL\"",
    "\"lambda\"",
    "\"queue\"",
    "\"http://localhost:9324/000000000000/q\"",
    "\"rate()\"",
    "\"cron(\"",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        exercise_json(&bytes);
        exercise_toml(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_json(v in json_value()) {
        let bytes = serde_json::to_vec(&v).unwrap_or_default();
        exercise_json(&bytes);
    }

    #[test]
    fn mutated_restaurant_contract(muts in prop::collection::vec(mutation(), 1..6)) {
        let mut doc: Value = serde_json::from_str(RESTAURANT).unwrap_or_default();
        for m in &muts {
            apply(&mut doc, m);
        }
        exercise_json(&serde_json::to_vec(&doc).unwrap_or_default());
    }

    #[test]
    fn mutated_composition_contract(muts in prop::collection::vec(mutation(), 1..6)) {
        let mut doc: Value = serde_json::from_str(COMPOSITION).unwrap_or_default();
        for m in &muts {
            apply(&mut doc, m);
        }
        exercise_json(&serde_json::to_vec(&doc).unwrap_or_default());
    }

    #[test]
    fn mutated_release(muts in prop::collection::vec(mutation(), 1..4)) {
        let mut doc: Value = serde_json::from_str(RELEASE).unwrap_or_default();
        for m in &muts {
            apply(&mut doc, m);
        }
        exercise_json(&serde_json::to_vec(&doc).unwrap_or_default());
    }

    #[test]
    fn arbitrary_toml_text(text in ".{0,256}") {
        exercise_toml(&text);
    }

    #[test]
    fn mutated_default_config(edits in prop::collection::vec((any::<Index>(), prop::sample::select(TOML_VALUES)), 1..6)) {
        let text = DriverConfig::annotated_default();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        for (i, value) in edits {
            let line = i.get(&lines).clone();
            let uncommented = line.trim_start_matches("# ");
            if let Some((k, _)) = uncommented.split_once(" = ") {
                let n = i.index(lines.len());
                if let Some(slot) = lines.get_mut(n) {
                    *slot = format!("{k} = {value}");
                }
            }
        }
        exercise_toml(&lines.join("\n"));
    }
}
