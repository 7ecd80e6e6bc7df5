//! The full derived matrix, plus the hand-written scenarios, for every example contract that
//! compiles, under every binding: every scenario meets its expectations and every invariant
//! holds. Trace snapshots pin the restaurant sample's behaviour under each binding and every
//! other contract's under the queue binding, each distinct trace once
//! (`snapshots/traces/*/index.snap` says which scenario's trace is where).

use std::path::{Path, PathBuf};

use tpf_sfn_test_support::snapshot_set::{self, SnapshotSet};

use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::Scenario;
use tpf_sfn_mapping::sfn::Subject;

const RESTAURANT: &str = "restaurant-approval.pipeline-contract.json";

fn snapshots(set: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(set)
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts")
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
    let subject = subject_for(&examples().join(RESTAURANT), BindingKind::Http).unwrap();
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
    let mut set = SnapshotSet::new(snapshots("traces/restaurant"));
    for binding in BindingKind::ALL {
        let subject = subject_for(&examples().join(RESTAURANT), binding).unwrap();
        let mut scenarios = proof::scenarios(&subject, hand_written());
        // The rollover trace is hundreds of identical iterations; its shape is pinned by the
        // metrics line of the other snapshots and by the invariant checks.
        scenarios.retain(|s| s.name != "history-rollover");
        for r in proof::prove(&subject, &scenarios, proof::SEED) {
            let binding = binding.as_str();
            set.add(
                format!("[{binding}] {}", r.name),
                &format!("{binding}.{}", slug(&r.name)),
                unnamed(&r.snapshot()),
            );
        }
    }
    set.assert(|name, text| insta::assert_snapshot!(name, text));
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    let subject = subject_for(&examples().join(RESTAURANT), BindingKind::Queue).unwrap();
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

/// The other example contracts under the queue binding (the restaurant sample has its own
/// set, under every binding). The 1,000-step contract's traces are summarised: a cycle that
/// repeats with other numbers is kept once.
#[test]
fn traces_per_contract_and_scenario() {
    let mut set = SnapshotSet::new(snapshots("traces/contracts"));
    let mut paths: Vec<_> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for contract in paths.iter().filter(|p| {
        let name = p.to_string_lossy();
        name.ends_with(".pipeline-contract.json") && !name.ends_with(RESTAURANT)
    }) {
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
            let text = unnamed(&r.snapshot());
            let text = if name == "thousand-steps" {
                summarise(&text)
            } else {
                text
            };
            set.add(
                format!("{name} [queue] {}", r.name),
                &format!("{name}.{}", slug(&r.name)),
                text,
            );
        }
    }
    set.assert(|name, text| insta::assert_snapshot!(name, text));
}

/// A scenario name as a short file name; the hash keeps cut names apart.
fn slug(name: &str) -> String {
    let slug = snapshot_set::file_safe(&name.replace(['/', ' '], "_"));
    if slug.len() > 80 {
        format!(
            "{}-{}",
            &slug[..80],
            tpf_sfn_compiler::lowering::names::short_hash(&[name], 8)
        )
    } else {
        slug
    }
}

/// Longest block of lines this summary folds.
const MAX_CYCLE: usize = 64;

/// A trace with every run of back-to-back repetitions of a block of lines (equal but for their
/// numbers: times, versions, steps, gate names) folded to its first occurrence and a count.
fn summarise(trace: &str) -> String {
    let lines: Vec<&str> = trace.lines().collect();
    let shapes: Vec<String> = lines.iter().map(|l| shape(l)).collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let mut best = (1, 1);
        for len in 1..=MAX_CYCLE.min((lines.len() - i) / 2) {
            let mut reps = 1;
            while i + (reps + 1) * len <= lines.len()
                && shapes[i..i + len] == shapes[i + reps * len..i + (reps + 1) * len]
            {
                reps += 1;
            }
            if reps > 1 && len * reps > best.0 * best.1 {
                best = (len, reps);
            }
        }
        let (len, reps) = best;
        for line in &lines[i..i + len] {
            out.push_str(line);
            out.push('\n');
        }
        if reps > 1 {
            out.push_str(&format!(
                "# … the {len} line(s) above {} more time(s), with other numbers\n",
                reps - 1
            ));
        }
        i += len * reps;
    }
    out
}

/// A line with each run of digits written `#` and each run of spaces as one.
fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        let c = if c.is_ascii_digit() { '#' } else { c };
        if !(matches!(c, '#' | ' ') && out.ends_with(c)) {
            out.push(c);
        }
    }
    out
}

/// The trace as a snapshot stores it: without the scenario's name, which the index holds, so
/// scenarios that behave the same (one per await of a uniform contract) share a snapshot.
fn unnamed(snapshot: &str) -> String {
    snapshot
        .split_once('\n')
        .map_or(snapshot, |(_, rest)| rest)
        .to_owned()
}

#[test]
fn a_summary_folds_repeats_and_keeps_the_rest() {
    let trace = "# head\n+1 wait 1\n+2 wake 1\n+3 wait 2\n+4 wake 2\n+5 done\n";
    assert_eq!(
        summarise(trace),
        "# head\n+1 wait 1\n+2 wake 1\n# … the 2 line(s) above 1 more time(s), with other numbers\n+5 done\n"
    );
    assert_eq!(summarise("a\nb\n"), "a\nb\n");
    assert_eq!(shape("sweep-10   → v12"), shape("sweep-9 → v3"));
}
