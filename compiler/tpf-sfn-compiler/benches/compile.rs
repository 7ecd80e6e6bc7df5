//! `cargo bench -p tpf-sfn-compiler --bench compile`
//!
//! Prints figures; asserts nothing about speed. Compares, in one run, compiling the restaurant
//! contract and a 1,000-step contract with plain `serde_json` parse + re-serialise of the same
//! 1,000-step file (the floor any compiler of that file pays).

use std::hint::black_box;
use std::time::{Duration, Instant};

use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::StepFunctions;

const RESTAURANT: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");
const RESTAURANT_RELEASE: &[u8] =
    include_bytes!("../../../examples/contracts/restaurant-approval.pipeline-release.json");
const THOUSAND: &[u8] =
    include_bytes!("../../../examples/contracts/thousand-steps.pipeline-contract.json");

struct Figures {
    median: Duration,
    p90: Duration,
    runs: usize,
}

/// Runs `f` repeatedly for about `budget`, after a warm-up, and returns per-run timings.
fn measure(budget: Duration, mut f: impl FnMut()) -> Figures {
    let warm = Instant::now();
    while warm.elapsed() < budget / 10 {
        f();
    }
    let mut samples = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || samples.len() < 10 {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    samples.sort();
    Figures {
        median: samples[samples.len() / 2],
        p90: samples[samples.len() * 9 / 10],
        runs: samples.len(),
    }
}

fn row(name: &str, f: &Figures) {
    println!(
        "{name:<58} median {:>10.1} µs   p90 {:>10.1} µs   ({} runs)",
        micros(f.median),
        micros(f.p90),
        f.runs
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing special. Either way,
    // keep the run short when only checking that the bench builds and runs.
    let quick = std::env::args().any(|a| a == "--quick")
        || std::env::var_os("TPF_SFN_BENCH_QUICK").is_some();
    let budget = if quick {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(3)
    };

    let restaurant = Input {
        contract_file: "restaurant-approval.pipeline-contract.json",
        contract: RESTAURANT,
        release: Some((
            "restaurant-approval.pipeline-release.json",
            RESTAURANT_RELEASE,
        )),
        ..Input::default()
    };
    let thousand = Input {
        contract_file: "thousand-steps.pipeline-contract.json",
        contract: THOUSAND,
        ..Input::default()
    };
    compile(&restaurant, StepFunctions).expect("restaurant compiles");
    compile(&thousand, StepFunctions).expect("1,000-step contract compiles");

    println!(
        "tpf-sfn compiler benchmark ({} KiB 1,000-step contract)",
        THOUSAND.len() / 1024
    );
    let r = measure(budget, || {
        black_box(compile(black_box(&restaurant), StepFunctions).ok());
    });
    row("compile restaurant-approval (4 steps, 1 await)", &r);
    let t = measure(budget, || {
        black_box(compile(black_box(&thousand), StepFunctions).ok());
    });
    row("compile thousand-steps (1,000 steps)", &t);
    let p = measure(budget, || {
        let v: serde_json::Value = serde_json::from_slice(black_box(THOUSAND)).unwrap_or_default();
        black_box(serde_json::to_string_pretty(&v).ok());
    });
    row(
        "serde_json parse + re-serialise of the same 1,000-step file",
        &p,
    );
    println!(
        "ratio compile(1,000 steps) / parse+serialise: {:.2}x",
        t.median.as_secs_f64() / p.median.as_secs_f64().max(1e-12)
    );
}
