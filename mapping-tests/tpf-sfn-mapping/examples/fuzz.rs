//! Structured fuzzing of every input path: the contract loader and compiler, the config loader,
//! the ASL loader and validator, and the interpreter running what they accept.
//!
//! ```sh
//! cargo run --release -p tpf-sfn-mapping --example fuzz -- --cases 1000000
//! ```
//!
//! Each case mutates a seed document (an example contract, an example config, a compiled
//! driver, a definition recorded on AWS when `TPF_SFN_AWS_RECORDED` names the
//! recordings' folder) a few times as JSON — members deleted, replaced by values from a
//! dictionary of the formats' own keys and tricky values, copied from
//! elsewhere in the document — and sometimes as bytes, then feeds it to its loader. Definitions
//! that load run in a fresh engine against a handler answering at random, with random token
//! callbacks, stops and redrives. Cases are independent and numbered: `--from N --cases 1`
//! repeats case N of a seed exactly. A panic is a failure: its input goes to `--out`
//! (default `target/fuzz-failures`), and the run exits 1. Memory must stay bounded: the peak
//! resident set is printed with every progress line.
//!
//! Nested executions (`states:startExecution`) go to the handler like any task, so a mutated
//! hand-over cannot start executions without end within one virtual instant.

use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use serde_json::{json, Value};

use asl_interp::rng::Rng;
use asl_interp::{Engine, TaskCall, TaskOutcome};
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_compiler::sfn::validate::{self, Profile, ValidateOptions};

/// How far cases got, so a run shows it reached past the loaders' first checks.
static COMPILED: AtomicU64 = AtomicU64::new(0);
static PARSED: AtomicU64 = AtomicU64::new(0);
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);
static EVENTS: AtomicU64 = AtomicU64::new(0);

const START_MS: i64 = 1_767_225_600_000;
/// Virtual time a case may run: long enough for waits, retries and timeouts to fire.
const HORIZON_MS: i64 = 3 * 86_400_000;
/// Task calls per case after which every call stays pending, so task loops end.
const MAX_TASK_CALLS: u32 = 64;

// ---------------------------------------------------------------------------------------------
// Seeds

struct Seeds {
    /// (file name, text) of each example contract.
    contracts: Vec<(String, String)>,
    releases: Vec<String>,
    configs: Vec<String>,
    /// Compiled drivers, and definitions recorded on AWS, with an input for each.
    machines: Vec<(Value, Value)>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn texts(dir: &Path, suffix: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .filter_map(|p| {
                    let name = p.file_name()?.to_string_lossy().into_owned();
                    Some((name, std::fs::read_to_string(&p).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn driver_input() -> Value {
    json!({
        "tenantId": "tenant-a",
        "executionId": "exec-1",
        "lineage": "exec-1",
        "generation": 0
    })
}

fn seeds() -> Seeds {
    let examples = repo().join("examples/contracts");
    let contracts = texts(&examples, ".pipeline-contract.json");
    let releases = texts(&examples, ".pipeline-release.json")
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let configs = texts(&repo().join("examples/aws"), ".toml")
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let mut machines = Vec::new();
    for (name, text) in &contracts {
        let input = Input {
            contract_file: name,
            contract: text.as_bytes(),
            ..Input::default()
        };
        if let Ok(out) = compile(&input, tpf_sfn_compiler::sfn::StepFunctions) {
            COMPILED.fetch_add(1, Relaxed);
            if let Ok(v) = serde_json::from_str(&asl::to_canonical_json(&out.driver)) {
                machines.push((v, driver_input()));
            }
        }
    }
    // The AWS-recorded definitions are not part of the project (they come from another
    // project's repository); they seed the run when `TPF_SFN_AWS_RECORDED` names their folder.
    let recorded = std::env::var_os("TPF_SFN_AWS_RECORDED")
        .filter(|v| !v.is_empty())
        .map(|dir| repo().join(dir));
    if recorded.is_none() {
        eprintln!(
            "fuzz: TPF_SFN_AWS_RECORDED is not set; no AWS-recorded definition seeds the run"
        );
    }
    for (_, text) in recorded.iter().flat_map(|dir| texts(dir, ".json")) {
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for e in doc["executions"].as_array().into_iter().flatten() {
            if e["definition"].is_object() {
                let input = match &e["input"] {
                    Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                    v => v.clone(),
                };
                machines.push((e["definition"].clone(), input));
            }
        }
    }
    Seeds {
        contracts,
        releases,
        configs,
        machines,
    }
}

// ---------------------------------------------------------------------------------------------
// Mutation

const KEYS: &[&str] = &[
    // ASL
    "Type",
    "Next",
    "End",
    "StartAt",
    "States",
    "Comment",
    "Parameters",
    "ResultPath",
    "ResultSelector",
    "InputPath",
    "OutputPath",
    "Retry",
    "Catch",
    "ErrorEquals",
    "MaxAttempts",
    "IntervalSeconds",
    "BackoffRate",
    "MaxDelaySeconds",
    "JitterStrategy",
    "Choices",
    "Default",
    "Variable",
    "StringEquals",
    "StringEqualsPath",
    "NumericGreaterThanEquals",
    "NumericLessThanEquals",
    "IsPresent",
    "IsTimestamp",
    "And",
    "Or",
    "Not",
    "Seconds",
    "SecondsPath",
    "Timestamp",
    "TimestampPath",
    "Resource",
    "TimeoutSeconds",
    "TimeoutSecondsPath",
    "HeartbeatSeconds",
    "HeartbeatSecondsPath",
    "ItemsPath",
    "ItemProcessor",
    "Iterator",
    "ItemSelector",
    "MaxConcurrency",
    "MaxConcurrencyPath",
    "Branches",
    "Result",
    "Error",
    "Cause",
    "ErrorPath",
    "CausePath",
    "QueryLanguage",
    "ProcessorConfig",
    "Mode",
    // contracts
    "schemaVersion",
    "pipelineId",
    "contractVersion",
    "contractHash",
    "steps",
    "index",
    "authoredName",
    "kind",
    "cardinality",
    "awaitTransport",
    "canonicalTypes",
    "composition",
    "definitions",
    "nodes",
    "continuations",
    "capabilities",
    "releaseVersion",
    "artifacts",
];

const STRINGS: &[&str] = &[
    "",
    " ",
    "$",
    "$$",
    "$.",
    "$.a",
    "$.a.b[0]",
    "$['a b']",
    "$..x",
    "$[*]",
    "$.x[?(@.y)]",
    "$[",
    "$$.Execution.Id",
    "$$.Task.Token",
    "$$.Map.Item.Value",
    "$$.State.RetryCount",
    "States.Format('{}', $.a)",
    "States.MathAdd($.n, 1)",
    "States.Array(",
    "States.Nope()",
    "States.StringToJson($.s)",
    "States.Hash($.a, 'SHA-256')",
    "States.ALL",
    "States.Timeout",
    "States.TaskFailed",
    "Task",
    "Pass",
    "Wait",
    "Choice",
    "Succeed",
    "Fail",
    "Map",
    "Parallel",
    "INLINE",
    "DISTRIBUTED",
    "JSONPath",
    "JSONata",
    "FULL",
    "NONE",
    "arn:aws:states:::http:invoke",
    "arn:aws:states:::lambda:invoke",
    "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
    "arn:aws:states:::aws-sdk:dynamodb:putItem.waitForTaskToken",
    "arn:aws:states:::states:startExecution",
    "arn:aws:states:::aws-sdk:sfn:describeExecution",
    "2026-01-01T00:00:00Z",
    "2026-13-45T99:99:99+25:00",
    "await",
    "internal",
    "ONE_TO_MANY",
    "MANY_TO_ONE",
    "kafka",
    "sha256:",
    "\u{2028}",
    "é中🚀",
    "\u{0}",
    "~/",
    "null",
];

/// Uniform in `0..n`, 0 when `n` is 0 (callers index only non-empty slices with it).
fn below(rng: &mut Rng, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        (rng.next_u64() % n as u64) as usize
    }
}

fn leaf(rng: &mut Rng, doc_strings: &[String]) -> Value {
    match rng.range_i64(0, 11) {
        0 => Value::Null,
        1 => Value::Bool(rng.next_u64() & 1 == 0),
        2 => json!(rng.range_i64(-3, 4)),
        3 => json!(
            [
                i64::MIN,
                i64::MAX,
                -1,
                0,
                25_000,
                86_400,
                2_147_483_647,
                2_147_483_648
            ][below(rng, 8)]
        ),
        4 => json!(u64::MAX - rng.range_i64(0, 2) as u64),
        5 => json!([0.5, -1.5, 1e300, 3.0, 1e-9][below(rng, 5)]),
        6 | 7 => json!(STRINGS[below(rng, STRINGS.len())]),
        8 | 9 if !doc_strings.is_empty() => {
            json!(doc_strings[below(rng, doc_strings.len())])
        }
        _ => json!("x".repeat(rng.range_i64(0, 300) as usize)),
    }
}

fn random_value(rng: &mut Rng, doc_strings: &[String], depth: u32) -> Value {
    if depth == 0 || rng.range_i64(0, 2) > 0 {
        return leaf(rng, doc_strings);
    }
    let n = rng.range_i64(0, 3) as usize;
    if rng.next_u64() & 1 == 0 {
        Value::Array(
            (0..n)
                .map(|_| random_value(rng, doc_strings, depth - 1))
                .collect(),
        )
    } else {
        Value::Object(
            (0..n)
                .map(|_| {
                    let k = KEYS[below(rng, KEYS.len())].to_string();
                    (k, random_value(rng, doc_strings, depth - 1))
                })
                .collect(),
        )
    }
}

/// Every node as a path of member keys / array indices, and every string in the document.
fn index(
    v: &Value,
    at: &mut Vec<PathStep>,
    nodes: &mut Vec<Vec<PathStep>>,
    strings: &mut Vec<String>,
) {
    nodes.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                strings.push(k.clone());
                at.push(PathStep::Key(k.clone()));
                index(c, at, nodes, strings);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(PathStep::Index(i));
                index(c, at, nodes, strings);
                at.pop();
            }
        }
        Value::String(s) => strings.push(s.clone()),
        _ => {}
    }
}

#[derive(Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn node_mut<'a>(v: &'a mut Value, path: &[PathStep]) -> Option<&'a mut Value> {
    let mut cur = v;
    for step in path {
        cur = match (cur, step) {
            (Value::Object(m), PathStep::Key(k)) => m.get_mut(k)?,
            (Value::Array(a), PathStep::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn mutate_json(doc: &mut Value, rng: &mut Rng) {
    let (mut nodes, mut strings) = (Vec::new(), Vec::new());
    index(doc, &mut Vec::new(), &mut nodes, &mut strings);
    if strings.is_empty() {
        strings.push(String::new());
    }
    let pick = |rng: &mut Rng, n: usize| below(rng, n);
    let target = nodes[pick(rng, nodes.len())].clone();
    let donor = nodes[pick(rng, nodes.len())].clone();
    let donated = node_mut(doc, &donor).map(|v| v.clone());
    let fresh = random_value(rng, &strings, 3);
    let op = rng.range_i64(0, 7);
    let Some(node) = node_mut(doc, &target) else {
        return;
    };
    match op {
        // Delete a member or an element.
        0 => match node {
            Value::Object(m) if !m.is_empty() => {
                let i = pick(rng, m.len());
                if let Some(k) = m.keys().nth(i).cloned() {
                    m.shift_remove(&k);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                a.remove(pick(rng, a.len()));
            }
            other => *other = fresh,
        },
        // Add a member the format knows, or an element.
        1 => match node {
            Value::Object(m) => {
                m.insert(KEYS[pick(rng, KEYS.len())].to_string(), fresh);
            }
            Value::Array(a) => {
                let at = pick(rng, a.len() + 1);
                a.insert(at, donated.unwrap_or(fresh));
            }
            other => *other = fresh,
        },
        // Copy another part of the document here: a state into a state, a name into a Next.
        2 => *node = donated.unwrap_or(fresh),
        // Nudge a string or a number.
        3 => {
            let nudged = match &*node {
                Value::String(s) => Some(match rng.range_i64(0, 4) {
                    0 => {
                        let cut = s.char_indices().nth(pick(rng, s.len() + 1));
                        json!(&s[..cut.map_or(s.len(), |(i, _)| i)])
                    }
                    1 => json!(format!("{s}{}", STRINGS[pick(rng, STRINGS.len())])),
                    2 => json!(strings[pick(rng, strings.len())]),
                    _ => json!(s.repeat(2)),
                }),
                Value::Number(n) => {
                    let f = n.as_f64().unwrap_or(0.0);
                    Some(match rng.range_i64(0, 4) {
                        0 => json!(-f),
                        1 => n
                            .as_i64()
                            .map_or(json!(f + 1.0), |i| json!(i.saturating_add(1))),
                        2 => json!(f * 1e6),
                        _ => json!(0),
                    })
                }
                _ => None,
            };
            *node = nudged.unwrap_or(fresh);
        }
        // Rename a member (a state, a key).
        4 => match node {
            Value::Object(m) if !m.is_empty() => {
                let i = pick(rng, m.len());
                let k = m.keys().nth(i).cloned().unwrap_or_default();
                if let Some(v) = m.shift_remove(&k) {
                    let new = if rng.next_u64() & 1 == 0 {
                        format!("{k}{}", STRINGS[pick(rng, STRINGS.len())])
                    } else {
                        strings[pick(rng, strings.len())].clone()
                    };
                    m.insert(new, v);
                }
            }
            other => *other = fresh,
        },
        _ => *node = fresh,
    }
}

fn mutate_bytes(bytes: &mut Vec<u8>, rng: &mut Rng) {
    if bytes.is_empty() {
        bytes.push(b'{');
        return;
    }
    let i = below(rng, bytes.len());
    match rng.range_i64(0, 5) {
        0 => bytes[i] ^= 1 << rng.range_i64(0, 7),
        1 => bytes.insert(i, b"{}[]\",:\\ 0e-\x00\xff"[rng.range_i64(0, 14) as usize]),
        2 => {
            let end = (i + rng.range_i64(1, 16) as usize).min(bytes.len());
            bytes.drain(i..end);
        }
        3 => bytes.truncate(i),
        _ => {
            let end = (i + rng.range_i64(1, 64) as usize).min(bytes.len());
            let chunk = bytes[i..end].to_vec();
            bytes.splice(i..i, chunk);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cases

/// What one case fed to the loaders, kept to write out if it panics.
#[derive(Default)]
struct Record {
    kind: &'static str,
    text: String,
    extra: String,
}

fn mutated(doc: &Value, rng: &mut Rng) -> (Value, Vec<u8>) {
    let mut doc = doc.clone();
    // Mostly one change, so most cases stay close enough to valid to reach the later checks.
    let changes = if rng.range_i64(0, 2) == 0 {
        1
    } else {
        1 + rng.range_i64(0, 5)
    };
    for _ in 0..changes {
        mutate_json(&mut doc, rng);
    }
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    if rng.range_i64(0, 10) == 0 {
        for _ in 0..1 + rng.range_i64(0, 3) {
            mutate_bytes(&mut bytes, rng);
        }
    }
    (doc, bytes)
}

fn contract_case(seeds: &Seeds, rng: &mut Rng, rec: &mut Record) {
    rec.kind = "contract";
    // The 1,000-step example compiles in milliseconds: mostly the small ones.
    let (name, text) = loop {
        let c = &seeds.contracts[below(rng, seeds.contracts.len())];
        if !c.0.starts_with("thousand") || rng.range_i64(0, 20) == 0 {
            break c;
        }
    };
    let doc: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let (_, bytes) = mutated(&doc, rng);
    rec.text = String::from_utf8_lossy(&bytes).into_owned();
    let release = (rng.range_i64(0, 4) == 0 && !seeds.releases.is_empty()).then(|| {
        let text = &seeds.releases[below(rng, seeds.releases.len())];
        let doc: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        mutated(&doc, rng).1
    });
    let config = (rng.range_i64(0, 4) == 0 && !seeds.configs.is_empty()).then(|| {
        let mut bytes = seeds.configs[below(rng, seeds.configs.len())]
            .clone()
            .into_bytes();
        for _ in 0..1 + rng.range_i64(0, 4) {
            mutate_bytes(&mut bytes, rng);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    });
    if let Some(r) = &release {
        let _ = writeln!(rec.extra, "release:\n{}", String::from_utf8_lossy(r));
    }
    if let Some(c) = &config {
        let _ = writeln!(rec.extra, "config:\n{c}");
    }
    // A retired binding now and then: its refusal must be coded, never a panic.
    let binding = [
        None,
        Some(BindingKind::Gateway),
        Some(BindingKind::Http),
        Some(BindingKind::Queue),
    ][below(rng, 4)];
    let _ = writeln!(rec.extra, "binding: {binding:?}, file: {name}");
    let input = Input {
        contract_file: name,
        contract: &bytes,
        release: release.as_deref().map(|r| ("release.json", r)),
        config: config.as_deref().map(|c| ("tpf-sfn.toml", c)),
        binding,
        // Mutations break the hash; without this, nothing past the hash check would be reached.
        allow_unverified_hash: rng.range_i64(0, 10) > 0,
    };
    if let Ok(out) = compile(&input, tpf_sfn_compiler::sfn::StepFunctions) {
        COMPILED.fetch_add(1, Relaxed);
        // What compiles must run: the driver of a mutated contract goes to the interpreter.
        let mut r2 = Rng::new(rng.next_u64());
        run_machine(&out.driver, driver_input(), &mut r2);
    }
}

fn asl_case(seeds: &Seeds, rng: &mut Rng, rec: &mut Record) {
    rec.kind = "asl";
    let (def, input) = &seeds.machines[below(rng, seeds.machines.len())];
    let (_, bytes) = mutated(def, rng);
    rec.text = String::from_utf8_lossy(&bytes).into_owned();
    let input = if rng.range_i64(0, 4) == 0 {
        mutated(input, rng).0
    } else {
        input.clone()
    };
    let _ = writeln!(rec.extra, "input: {input}");
    let opts = ValidateOptions {
        event_limit: [25_000, 1, 0, u64::MAX][below(rng, 4)],
        map_item_bounds: Default::default(),
        profile: [Profile::Generic, Profile::TpfDriver, Profile::Auto][below(rng, 3)],
    };
    let _ = validate::validate_bytes("fuzz.asl.json", &bytes, &opts);
    if let Ok(sm) = asl::parse("fuzz.asl.json", &bytes) {
        PARSED.fetch_add(1, Relaxed);
        let _ = validate::validate("fuzz.asl.json", &sm, &opts);
        let _ = validate::analyze_history(&sm, &opts);
        run_machine(&sm, input, rng);
    }
}

/// A valid definition with a mutated input and a handler answering at random: the interpreter's
/// own paths, templates, choices and retries under inputs nobody wrote.
fn input_case(seeds: &Seeds, rng: &mut Rng, rec: &mut Record) {
    rec.kind = "input";
    let (def, input) = &seeds.machines[below(rng, seeds.machines.len())];
    let input = mutated(input, rng).0;
    rec.text = def.to_string();
    let _ = writeln!(rec.extra, "input: {input}");
    if let Ok(sm) = asl::from_value("fuzz.asl.json", def.clone()) {
        run_machine(&sm, input, rng);
    }
}

const ERRORS: &[&str] = &[
    "States.Timeout",
    "States.TaskFailed",
    "States.Http.StatusCode.503",
    "States.Http.StatusCode.409",
    "Lambda.ServiceException",
    "TPF.Transport",
    "TPF.NotFound",
    "DynamoDB.ThrottlingException",
    "States.Runtime",
    "",
];

fn answer(rng: &mut Rng, answers: &[Value]) -> Value {
    match rng.range_i64(0, 4) {
        0 => json!({}),
        1 => random_value(rng, &[], 3),
        _ => answers[below(rng, answers.len())].clone(),
    }
}

fn run_machine(sm: &tpf_sfn_compiler::sfn::asl::StateMachine, input: Value, rng: &mut Rng) {
    let mut engine = Engine::new(START_MS, rng.next_u64());
    engine.set_builtin_integrations(false);
    engine.set_record_payloads(rng.range_i64(0, 2) == 0);
    let Ok(machine) = engine.create_state_machine("fuzz", sm.clone()) else {
        return;
    };
    let Ok(started) = engine.start_execution(&machine, "case", input) else {
        return;
    };
    let arn = started.execution_arn;
    EXECUTIONS.fetch_add(1, Relaxed);
    // TPF-shaped answers reach deep into the drivers' choices; anything else tests the rest.
    let answers = [
        json!({"StatusCode": 200, "ResponseBody": {"status": "SUCCEEDED", "version": 3, "driver": {"nextIteration": 1}}}),
        json!({"StatusCode": 200, "Payload": {"status": "WAITING_EXTERNAL", "await": {"stepName": "Await Restaurant Decision", "wakeInSeconds": 1}}}),
        json!({"status": "WAIT_RETRY", "nextDueAt": "2026-01-01T00:05:00Z", "driver": {"nextIteration": 999999}}),
        json!({"status": "RUNNING", "nextDueAt": null}),
        json!({"Item": {}, "wokenBy": "bridge"}),
        json!({"ExecutionArn": "arn:aws:states:us-east-1:123456789012:execution:fuzz:next", "StartDate": 0}),
    ];
    let mut handler_rng = Rng::new(rng.next_u64());
    let mut calls = 0u32;
    let mut handler = |_call: &TaskCall<'_>| {
        calls += 1;
        if calls > MAX_TASK_CALLS {
            return TaskOutcome::Pending;
        }
        match handler_rng.range_i64(0, 6) {
            0 => TaskOutcome::failed(
                ERRORS[below(&mut handler_rng, ERRORS.len())],
                "fuzz".to_string(),
            ),
            1 => TaskOutcome::Pending,
            _ => TaskOutcome::Succeeded(answer(&mut handler_rng, &answers)),
        }
    };
    let deadline = START_MS + HORIZON_MS;
    engine.advance_until_idle_or(deadline, &mut handler);
    for _ in 0..rng.range_i64(0, 4) {
        let tokens: Vec<String> = engine
            .open_tokens(&arn)
            .iter()
            .map(|t| t.to_string())
            .collect();
        for token in tokens {
            let _ = match rng.range_i64(0, 4) {
                0 => engine.send_task_failure(&token, ERRORS[below(rng, ERRORS.len())], "fuzz"),
                1 => engine.send_task_heartbeat(&token),
                _ => engine.send_task_success(&token, answer(rng, &answers)),
            };
        }
        match rng.range_i64(0, 8) {
            0 => {
                let _ = engine.stop_execution(&arn, Some("Fuzz.Stop"), None);
            }
            1 => {
                let _ = engine.redrive_execution(&arn);
            }
            _ => {}
        }
        engine.advance_until_idle_or(deadline, &mut handler);
    }
    let _ = engine.describe_execution(&arn);
    let _ = engine.positions(&arn);
    EVENTS.fetch_add(engine.history(&arn).len() as u64, Relaxed);
    let _ = engine.current_state(&arn);
}

// ---------------------------------------------------------------------------------------------
// Driver

struct Args {
    cases: u64,
    from: u64,
    seed: u64,
    out: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        cases: 10_000,
        from: 0,
        seed: 1,
        out: PathBuf::from("target/fuzz-failures"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--cases" => a.cases = value()?.parse().map_err(|e| format!("--cases: {e}"))?,
            "--from" => a.from = value()?.parse().map_err(|e| format!("--from: {e}"))?,
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--out" => a.out = PathBuf::from(value()?),
            other => {
                return Err(format!(
                    "unknown argument {other} (--cases N --from N --seed N --out DIR)"
                ))
            }
        }
    }
    Ok(a)
}

/// A line of `/proc/self/status` (`VmHWM`: peak resident set, `VmRSS`: current), where the
/// platform has it.
fn status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .map(|l| l[field.len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn peak_rss() -> String {
    status("VmHWM:")
}

fn case_rng(seed: u64, case: u64) -> Rng {
    // SplitMix's first output decorrelates neighbouring case numbers.
    let mut r = Rng::new(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    Rng::new(r.next_u64())
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fuzz: {e}");
            std::process::exit(2);
        }
    };
    let seeds = seeds();
    if seeds.contracts.is_empty() || seeds.machines.is_empty() {
        eprintln!("fuzz: no seed documents found under {}", repo().display());
        std::process::exit(2);
    }
    println!(
        "fuzz: seed {}, cases {}..{}, {} contracts, {} machine definitions as seeds",
        args.seed,
        args.from,
        args.from + args.cases,
        seeds.contracts.len(),
        seeds.machines.len()
    );
    panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg}{at}"));
    }));
    let started = Instant::now();
    let mut panics = 0u64;
    let mut kinds = [0u64; 3];
    let every = (args.cases / 20).max(1);
    for case in args.from..args.from + args.cases {
        let mut rng = case_rng(args.seed, case);
        let mut rec = Record::default();
        let kind = match case % 10 {
            0..=3 => 0,
            4..=6 => 1,
            _ => 2,
        };
        kinds[kind] += 1;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| match kind {
            0 => contract_case(&seeds, &mut rng, &mut rec),
            1 => asl_case(&seeds, &mut rng, &mut rec),
            _ => input_case(&seeds, &mut rng, &mut rec),
        }));
        if outcome.is_err() {
            panics += 1;
            let message = LAST_PANIC.with(|p| p.borrow().clone());
            let _ = std::fs::create_dir_all(&args.out);
            let file = args
                .out
                .join(format!("panic-seed{}-case{case}.txt", args.seed));
            let body = format!(
                "panic: {message}\nkind: {}\nrepeat: cargo run --release -p tpf-sfn-mapping --example fuzz -- --seed {} --from {case} --cases 1\n{}\n--- document ---\n{}\n",
                rec.kind, args.seed, rec.extra, rec.text
            );
            let _ = std::fs::write(&file, body);
            eprintln!(
                "case {case} ({}) panicked: {message} -> {}",
                rec.kind,
                file.display()
            );
        }
        let done = case + 1 - args.from;
        if done % every == 0 {
            // The current resident set tells a leak (it grows) from one large case (the peak
            // rises once and stays).
            println!(
                "  {done} cases, {panics} panics, {:.0} s, peak RSS {}, RSS now {}",
                started.elapsed().as_secs_f64(),
                peak_rss(),
                status("VmRSS:")
            );
        }
    }
    println!(
        "fuzz: {} cases run (contract {}, asl {}, input {}), {panics} panics found, {:.1} s, peak RSS {}",
        args.cases,
        kinds[0],
        kinds[1],
        kinds[2],
        started.elapsed().as_secs_f64(),
        peak_rss()
    );
    println!(
        "      reached: {} contracts compiled, {} mutated definitions parsed, {} executions run ({} history events)",
        COMPILED.load(Relaxed),
        PARSED.load(Relaxed),
        EXECUTIONS.load(Relaxed),
        EVENTS.load(Relaxed)
    );
    if panics > 0 {
        std::process::exit(1);
    }
}
