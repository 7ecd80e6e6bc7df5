//! `cargo bench -p tpf-sfn-mapping --bench matrix`
//!
//! Prints figures; asserts nothing about speed: the full scenario matrix for the restaurant
//! contract (Action API v1's world on Step Functions), simulated driver executions per second, the full matrix of a 2,000-step contract
//! (generated here), and the parked driver's cost next to a polling driver's on the same
//! scenario.

use tpf_sfn_test_support::contracts as long_contract;

use std::hint::black_box;
use std::time::{Duration, Instant};

use tpf_sfn_compiler::compile::Input;
use tpf_sfn_mapping::{proof, sfn};

// The allocator the command line uses, so the figures are the ones `tpf-sfn mapping-test` sees.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Sorted timings of `runs` calls of `f`.
fn timed(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let input = proof::august_restaurant_v1_input();
    let subject: sfn::Subject = proof::subject(&input, None).expect("restaurant compiles");
    let scenarios = proof::scenarios(&subject, Vec::new());

    println!("tpf-sfn mapping benchmark (restaurant-approval, http binding)");
    let times = timed(10, || {
        let reports = proof::prove(&subject, &scenarios, proof::SEED);
        assert!(reports.iter().all(|r| r.passed()));
    });
    println!(
        "full matrix ({} scenarios × {} checks): median {:.1} ms, min {:.1} ms (10 runs)",
        scenarios.len(),
        tpf_sfn_mapping::invariants::CHECKS.len(),
        ms(times[5]),
        ms(times[0])
    );

    let happy = scenarios
        .iter()
        .find(|s| s.name == "happy-path")
        .expect("happy path");
    // More runs for a profile of the happy path alone (`perf record` over this bench).
    let n = std::env::var("TPF_BENCH_HAPPY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    // As `proof::prove` runs its scenarios: the machines pinned, found by address at deploy.
    let pinned = sfn::pin(&subject);
    let t = Instant::now();
    for _ in 0..n {
        black_box(sfn::run(&subject, happy, proof::SEED).ok());
    }
    let secs = t.elapsed().as_secs_f64();
    drop(pinned);
    println!(
        "simulated happy-path driver executions: {:.0} per second ({n} runs in {:.2} s)",
        n as f64 / secs,
        secs
    );

    long_matrix(2000);

    println!("\nparked (callback token) vs polling driver, same scenarios:");
    println!(
        "{:<48} {:>12} {:>12} {:>8}",
        "scenario / driver", "transitions", "events", "calls"
    );
    for name in ["happy-path", "deadline-timeout/Await Restaurant Decision"] {
        let s = scenarios.iter().find(|s| s.name == name).expect("scenario");
        for (label, subj) in [
            ("parked", subject.clone()),
            ("polling every 15 s", sfn::polling_variant(&subject, 15)),
            ("polling every 60 s", sfn::polling_variant(&subject, 60)),
        ] {
            let r = proof::run_one(&subj, s, proof::SEED);
            let m = &r.metrics;
            println!(
                "{:<48} {:>12} {:>12} {:>8}",
                format!("{name} / {label}"),
                m.state_transitions,
                m.history_events,
                m.action_calls
            );
        }
    }
}

/// The full matrix of a generated `steps`-step contract (an await every 100th step), compile
/// and scenario derivation included, as `tpf-sfn mapping-test` runs it.
fn long_matrix(steps: usize) {
    // The generator is the example's at 1,000 steps, so the figure is for that shape.
    assert_eq!(
        long_contract::long_contract(1000),
        long_contract::THOUSAND.as_bytes(),
        "the generator no longer reproduces examples/contracts/thousand-steps"
    );
    let bytes = long_contract::long_contract(steps);
    let input = Input {
        contract_file: "long.pipeline-contract.json",
        contract: &bytes,
        // The v1 proof's matrix, as `mapping-test --binding http` runs it.
        binding: Some(tpf_sfn_compiler::config::BindingKind::Http),
        ..Input::default()
    };
    let mut scenarios = 0;
    let times = timed(3, || {
        let subject: sfn::Subject =
            proof::subject(&input, None).expect("generated contract compiles");
        let all = proof::scenarios(&subject, Vec::new());
        scenarios = all.len();
        let reports = proof::prove(&subject, &all, proof::SEED);
        assert!(reports.iter().all(|r| r.passed()));
    });
    println!(
        "full matrix of a {steps}-step contract ({} KiB, {scenarios} scenarios, compile included): median {:.0} ms, min {:.0} ms (3 runs)",
        bytes.len() / 1024,
        ms(times[1]),
        ms(times[0])
    );
}
