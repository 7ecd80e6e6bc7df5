//! The Lambda durable functions backend over the derived matrix, plus the hand-written
//! scenarios: every example contract that compiles, under every binding this backend has,
//! meets every expectation and every invariant. Trace snapshots pin the restaurant sample's
//! behaviour (`snapshots/durable-traces/restaurant/index.snap` says which scenario's trace is
//! where).

use std::path::{Path, PathBuf};

use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_mapping::durable::Subject;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::Scenario;
use tpf_sfn_mapping::sfn::Machines;
use tpf_sfn_test_support::snapshot_set::{self, SnapshotSet};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts")
}

fn subject_for(contract: &Path, binding: BindingKind) -> Result<Subject, Vec<String>> {
    let bytes = std::fs::read(contract).unwrap();
    let name = contract.file_name().unwrap().to_string_lossy().to_string();
    let release_path =
        contract.with_file_name(name.replace(".pipeline-contract.json", ".pipeline-release.json"));
    let release = release_path
        .exists()
        .then(|| std::fs::read(&release_path).unwrap());
    let input = Input {
        contract_file: "contract.json",
        contract: &bytes,
        release: release.as_deref().map(|b| ("release.json", b)),
        binding: Some(binding),
        ..Input::default()
    };
    proof::subject(&input, None).map_err(|d| d.0.iter().map(|d| d.code.to_string()).collect())
}

fn hand_written() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| Scenario::from_toml(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

fn contracts() -> Vec<PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".pipeline-contract.json"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_example_contract_passes_the_durable_matrix_under_every_binding() {
    let mut proven = 0;
    for contract in contracts() {
        for binding in BindingKind::ALL {
            let subject = match subject_for(&contract, binding) {
                Ok(s) => s,
                // The queue binding has no durable form, and the upstream fixture with no
                // steps compiles for no backend: both are the compiler's coded refusals.
                Err(codes) => {
                    assert!(
                        binding == BindingKind::Queue
                            && codes.contains(&"DURABLE_BINDING_UNSUPPORTED".to_string())
                            || proof::subject::<Machines>(
                                &Input {
                                    contract_file: "c.json",
                                    contract: &std::fs::read(&contract).unwrap(),
                                    binding: Some(binding),
                                    ..Input::default()
                                },
                                None
                            )
                            .is_err(),
                        "{} [{binding:?}]: {codes:?}",
                        contract.display()
                    );
                    continue;
                }
            };
            let scenarios = proof::scenarios(&subject, Vec::new());
            for r in proof::prove(&subject, &scenarios, proof::SEED) {
                assert!(
                    r.passed(),
                    "{} [{binding:?}] {}: {:?} {:?} {:?}\n{}",
                    contract.display(),
                    r.name,
                    r.error,
                    r.unmet_expectations,
                    r.violations,
                    r.trace
                );
                proven += 1;
            }
        }
    }
    assert!(proven > 200, "only {proven} scenario runs");
}

#[test]
fn hand_written_scenarios_run_on_the_durable_backend() {
    let subject = subject_for(
        &examples().join("restaurant-approval.pipeline-contract.json"),
        BindingKind::Http,
    )
    .unwrap();
    let scenarios = hand_written();
    assert!(scenarios.len() >= 3);
    for r in proof::prove(&subject, &scenarios, proof::SEED) {
        assert!(
            r.passed(),
            "{}: {:?} {:?} {:?}\n{}",
            r.name,
            r.error,
            r.unmet_expectations,
            r.violations,
            r.trace
        );
    }
}

#[test]
fn restaurant_durable_traces_per_scenario() {
    let mut set = SnapshotSet::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/durable-traces/restaurant"),
    );
    let subject: Subject = proof::subject(&proof::august_restaurant_v1_input(), None).unwrap();
    let mut scenarios = proof::scenarios(&subject, hand_written());
    // The rollover trace is a hundred identical iterations; the metrics line of the matrix
    // report and the invariant checks pin its shape.
    scenarios.retain(|s| s.name != "history-rollover");
    for r in proof::prove(&subject, &scenarios, proof::SEED) {
        let slug = snapshot_set::file_safe(&r.name.replace(['/', ' '], "_"));
        let text = r.snapshot();
        let text = text
            .split_once('\n')
            .map_or(text.as_str(), |(_, rest)| rest)
            .to_owned();
        set.add(format!("[lambda-durable] {}", r.name), &slug, text);
    }
    set.assert(|name, text| insta::assert_snapshot!(name, text));
}

#[test]
fn a_durable_run_is_the_same_every_time() {
    let subject: Subject = proof::subject(&proof::august_restaurant_v1_input(), None).unwrap();
    let scenarios = proof::scenarios(&subject, Vec::new());
    let a: Vec<String> = proof::prove(&subject, &scenarios, 1)
        .into_iter()
        .map(|r| r.snapshot())
        .collect();
    let b: Vec<String> = proof::prove(&subject, &scenarios, 1)
        .into_iter()
        .map(|r| r.snapshot())
        .collect();
    assert_eq!(a, b);
}

#[test]
fn the_durable_metrics_are_counted() {
    let subject: Subject = proof::subject(&proof::august_restaurant_v1_input(), None).unwrap();
    let sc = proof::scenarios(&subject, Vec::new());
    let happy = sc.iter().find(|s| s.name == "happy-path").unwrap();
    let r = proof::run_one(&subject, happy, proof::SEED);
    // Register, ask, park (3), ask: six operations in two invocations (one park).
    assert_eq!(
        (
            r.metrics.operations,
            r.metrics.invocations,
            r.metrics.generations
        ),
        (6, 2, 1),
        "{:?}",
        r.metrics
    );
    assert_eq!(r.metrics.state_transitions, 0);
    assert!(
        r.snapshot()
            .contains("# metrics: 6 operations, 2 invocations"),
        "{}",
        r.snapshot()
    );
}

#[test]
fn proving_on_the_durable_backend_compiles_no_state_machine() {
    // Twenty transport retries within a 1,000-event history budget: the Step Functions lowering
    // cannot bound its sweeper's history and refuses; the durable lowering does not read the
    // event budget, so the durable driver still gets its verdict.
    let config = "[transport-retry]\nmax-attempts = 20\n\n[history]\nevent-budget = 1000\n";
    let input = Input {
        config: Some(("tight.tpf-sfn.toml", config)),
        ..proof::august_restaurant_v1_input()
    };
    let refused = proof::subject::<Machines>(&input, None).expect_err("Step Functions refuses");
    assert!(
        refused
            .0
            .iter()
            .any(|d| d.code == "ASL_HISTORY_BUDGET_EXCEEDED"),
        "{refused:?}"
    );
    let subject: Subject = proof::subject(&input, None).expect("the durable lowering accepts");
    let reports = proof::prove(
        &subject,
        &proof::scenarios(&subject, Vec::new()),
        proof::SEED,
    );
    assert!(reports.len() > 10);
    for r in reports {
        assert!(
            r.passed(),
            "{}: {:?} {:?}",
            r.name,
            r.unmet_expectations,
            r.violations
        );
    }
}
