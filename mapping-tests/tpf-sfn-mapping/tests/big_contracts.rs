//! Contracts far larger than the examples, generated here rather than checked in: the derived
//! horizon covers every await, and the static verdict on a huge driver comes without running a
//! scenario.

use serde_json::{json, Map, Value};
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_compiler::contract::hash::{contract_hash, contract_version};
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::matrix;
use tpf_sfn_mapping::sfn::Subject;

/// A contract whose steps alternate a service step and an await, `awaits` times.
fn contract_with_awaits(awaits: usize) -> Vec<u8> {
    let mut steps = Vec::new();
    for i in 0..awaits {
        let (a, b, c) = (format!("T{i}a"), format!("T{i}b"), format!("T{}a", i + 1));
        steps.push(json!({
            "index": 2 * i, "authoredName": format!("Prepare {i:03}"), "kind": "internal",
            "cardinality": "ONE_TO_ONE", "inputTypeId": format!("org.example.big.{a}"),
            "outputTypeId": format!("org.example.big.{b}"),
            "runtimeClass": format!("org.example.big.Prepare{i}Service"),
            "clientClass": format!("org.example.big.Prepare{i}Client")
        }));
        steps.push(json!({
            "index": 2 * i + 1, "authoredName": format!("Await Gate {i:03}"), "kind": "await",
            "cardinality": "ONE_TO_ONE", "inputTypeId": format!("org.example.big.{b}"),
            "outputTypeId": format!("org.example.big.{c}"),
            "runtimeClass": format!("org.example.big.Await{i}Step"),
            "clientClass": format!("org.example.big.Await{i}Step"),
            "awaitTransport": "interaction-api"
        }));
    }
    let mut doc: Map<String, Value> = serde_json::from_value(json!({
        "schemaVersion": 1,
        "pipelineId": "org.example.big",
        "contractVersion": "",
        "contractHash": "",
        "platform": "COMPUTE",
        "transport": "REST",
        "module": "orchestrator-svc",
        "pluginHost": false,
        "runtimeLayout": "MONOLITH",
        "steps": steps
    }))
    .unwrap();
    let hash = contract_hash(&doc);
    doc.insert("contractVersion".into(), json!(contract_version(&hash)));
    doc.insert("contractHash".into(), json!(hash));
    serde_json::to_vec_pretty(&doc).unwrap()
}

fn subject_of(contract: &[u8]) -> Subject {
    let input = Input {
        contract_file: "big.pipeline-contract.json",
        contract,
        binding: Some(BindingKind::Queue),
        ..Input::default()
    };
    proof::subject(&input, None).expect("the generated contract compiles")
}

#[test]
fn a_contract_with_a_hundred_awaits_passes_the_matrix() {
    let subject = subject_of(&contract_with_awaits(100));
    assert_eq!(subject.plan.awaits.len(), 100);
    let horizon = matrix::horizon_seconds(&subject);
    assert!(horizon > 100 * 1800, "horizon {horizon} s");
    // Every scenario family once, on the last await where a family is per await: the one a
    // fixed horizon cut off.
    let last = "Await Gate 099";
    let scenarios: Vec<_> = matrix::derive(&subject)
        .into_iter()
        .filter(|s| !s.name.contains('/') || s.name.ends_with(last))
        .collect();
    assert!(scenarios.iter().any(|s| s.name == "happy-path"));
    for r in proof::prove(&subject, &scenarios, proof::SEED) {
        assert!(
            r.passed(),
            "{}: {:?} {:?} {:?}",
            r.name,
            r.error,
            r.unmet_expectations,
            r.violations
        );
    }
}

#[test]
fn a_rejected_driver_gets_the_static_verdict_without_running() {
    // 100,000 states the loop never reaches: the validator rejects the definition (size,
    // unreachable states) and no scenario runs.
    let mut subject = subject_of(&contract_with_awaits(2));
    let mut v = serde_json::to_value(&subject.program.driver).unwrap();
    let states = v["States"].as_object_mut().unwrap();
    for i in 0..100_000 {
        states.insert(
            format!("Filler {i}"),
            json!({"Type": "Pass", "Next": "Process work item"}),
        );
    }
    subject.program.driver = asl::from_value("huge.asl.json", v).unwrap();
    let scenarios = matrix::derive(&subject);
    assert!(scenarios.len() > 10);
    let reports = proof::prove(&subject, &scenarios, proof::SEED);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].name, proof::STATIC_CHECKS);
    let details: Vec<&str> = reports[0]
        .violations
        .iter()
        .map(|v| v.detail.as_str())
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.starts_with("ASL_DEFINITION_TOO_LARGE")),
        "{:?}",
        &details[..details.len().min(5)]
    );
}

/// The per-await families of a derived matrix, by await name.
fn per_await_names(subject: &Subject) -> Vec<String> {
    matrix::derive(subject)
        .into_iter()
        .filter_map(|s| s.name.split_once('/').map(|(_, a)| a.to_string()))
        .collect()
}

#[test]
fn identical_awaits_share_one_representative_and_the_report_says_so() {
    let subject = subject_of(&contract_with_awaits(6));
    let coverage = matrix::coverage(&subject);
    assert_eq!(coverage.classes.awaits, 6);
    assert_eq!(coverage.classes.classes.len(), 1);
    assert_eq!(coverage.classes.classes[0].member_names.len(), 6);
    assert_eq!(
        coverage.classes.classes[0].representatives,
        ["Await Gate 000", "Await Gate 005"]
    );
    let names = per_await_names(&subject);
    assert!(
        names
            .iter()
            .all(|n| n == "Await Gate 000" || n == "Await Gate 005"),
        "{names:?}"
    );
    for f in &coverage.families {
        assert!(f.awaits_covered <= 6, "{f:?}");
    }
    let deadline = coverage
        .families
        .iter()
        .find(|f| f.family == "deadline-timeout")
        .expect("a deadline-timeout family");
    assert_eq!(deadline.awaits_covered, 6);
    assert_eq!(deadline.ran_on, ["Await Gate 000", "Await Gate 005"]);
}

#[test]
fn a_broken_await_state_that_is_not_a_representative_runs_and_fails() {
    let mut subject = subject_of(&contract_with_awaits(5));
    let state = subject.program.sfn.await_states[2].clone();
    assert!(!per_await_names(&subject).contains(&"Await Gate 002".to_string()));

    // The middle await's deadline no longer wakes the driver: only a scenario in which nobody
    // completes that await can see it, and it is not one the unbroken driver runs.
    let mut v = serde_json::to_value(&subject.program.driver).unwrap();
    let task = v["States"][&state].as_object_mut().unwrap();
    task.remove("TimeoutSecondsPath");
    task.insert("TimeoutSeconds".into(), json!(31_536_000));
    subject.program.driver = asl::from_value("broken.asl.json", v).unwrap();

    let scenarios = matrix::derive(&subject);
    let ran: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
    assert!(ran.contains(&"deadline-timeout/Await Gate 002"), "{ran:?}");
    let coverage = matrix::coverage(&subject);
    assert_eq!(coverage.classes.classes.len(), 2);

    let failed: Vec<String> = proof::prove(&subject, &scenarios, proof::SEED)
        .into_iter()
        .filter(|r| !r.passed())
        .map(|r| r.name)
        .collect();
    assert!(
        failed
            .iter()
            .any(|n| n == "deadline-timeout/Await Gate 002"),
        "{failed:?}"
    );
}
