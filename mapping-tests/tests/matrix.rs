//! The full derived matrix, plus the hand-written scenarios, for every example contract that
//! compiles, under every binding: every scenario meets its expectations and every invariant
//! holds. Trace snapshots pin the restaurant sample's behaviour under each binding.

use std::path::{Path, PathBuf};

use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::{Scenario, Subject};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/contracts")
}

fn subject_for(contract: &Path, binding: BindingKind) -> Option<Subject> {
    let bytes = std::fs::read(contract).unwrap();
    let release_path = contract.with_file_name(
        contract
            .file_name()?
            .to_str()?
            .replace(".pipeline-contract.json", ".pipeline-release.json"),
    );
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
    proof::subject(&input, None).ok()
}

fn hand_written() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
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

#[test]
fn every_example_contract_passes_the_matrix_under_every_binding() {
    let mut proven = 0;
    let mut paths: Vec<_> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for contract in paths
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".pipeline-contract.json"))
    {
        for binding in BindingKind::ALL {
            // Contracts the compiler rejects (the upstream fixture with no steps) have no driver.
            let Some(subject) = subject_for(contract, binding) else {
                continue;
            };
            for r in proof::prove(
                &subject,
                &proof::scenarios(&subject, Vec::new()),
                proof::SEED,
            ) {
                assert!(
                    r.passed(),
                    "{} [{binding:?}] {}: {:?} {:?} {:?}",
                    contract.display(),
                    r.name,
                    r.error,
                    r.unmet_expectations,
                    r.violations
                );
                proven += 1;
            }
        }
    }
    assert!(proven > 400, "only {proven} scenario runs");
}

#[test]
fn hand_written_scenarios_run_like_derived_ones() {
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
fn restaurant_traces_per_binding_and_scenario() {
    for binding in BindingKind::ALL {
        let subject = subject_for(
            &examples().join("restaurant-approval.pipeline-contract.json"),
            binding,
        )
        .unwrap();
        let mut scenarios = proof::scenarios(&subject, hand_written());
        // The rollover trace is hundreds of identical iterations; its shape is pinned by the
        // metrics line of the other snapshots and by the invariant checks.
        scenarios.retain(|s| s.name != "history-rollover");
        for r in proof::prove(&subject, &scenarios, proof::SEED) {
            insta::assert_snapshot!(
                format!(
                    "restaurant-{}-{}",
                    binding.as_str(),
                    r.name.replace(['/', ' '], "_")
                ),
                r.snapshot()
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    let subject = subject_for(
        &examples().join("restaurant-approval.pipeline-contract.json"),
        BindingKind::Queue,
    )
    .unwrap();
    let scenarios = proof::scenarios(&subject, Vec::new());
    let a: Vec<String> = proof::prove(&subject, &scenarios, 11)
        .into_iter()
        .map(|r| r.snapshot())
        .collect();
    let b: Vec<String> = proof::prove(&subject, &scenarios, 11)
        .into_iter()
        .map(|r| r.snapshot())
        .collect();
    assert_eq!(a, b);
}

#[test]
fn traces_per_contract_and_scenario() {
    let mut paths: Vec<_> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for contract in paths
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".pipeline-contract.json"))
    {
        let Some(subject) = subject_for(contract, BindingKind::Queue) else {
            continue;
        };
        let name = contract
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".pipeline-contract.json", "");
        let mut scenarios = proof::scenarios(&subject, Vec::new());
        scenarios.retain(|s| s.name != "history-rollover");
        for r in proof::prove(&subject, &scenarios, proof::SEED) {
            let mut slug: String = r
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            // Keep file names short on every file system; the hash keeps cut names apart.
            if slug.len() > 80 {
                slug = format!(
                    "{}-{}",
                    &slug[..80],
                    tpf_sfn_compiler::sfn::names::short_hash(&[&r.name], 8)
                );
            }
            insta::assert_snapshot!(format!("{name}-queue-{slug}"), r.snapshot());
        }
    }
}
