//! `cargo bench -p tpf-sfn-mapping --bench gateway`
//!
//! Prints figures; asserts nothing about speed. TPF's conformance catalogue in the gateway
//! world, as `tpf-sfn mapping-test` runs it on the restaurant contract, on both engines in one
//! run: the compiled Step Functions driver on the ASL interpreter and the Lambda durable
//! functions driver on the replay engine. Per engine: the time of one catalogue run, and of
//! each scenario. The engines alternate within every round, so a load that comes and goes on a
//! shared machine weighs on both alike.
//!
//! Each figure is given as wall time, median (min) of the rounds, and as the thread's CPU time
//! (Linux's `/proc/thread-self/schedstat`), the mean over every run: the world runs on a
//! virtual clock, so a run is CPU-bound and its CPU time is what it costs whatever else the
//! machine runs, while the wall time adds the waits for a core. The kernel brings a thread's
//! CPU time up to date at its scheduler's ticks, not at every read, so one short run's CPU time
//! is coarse; the mean over many runs is not.
//!
//! `TPF_BENCH_GATEWAY_RUNS` sets the rounds (default 10); each round runs the whole catalogue
//! once and every scenario `TPF_BENCH_GATEWAY_BATCH` times (default 10) per engine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use tpf_sfn_mapping::gateway::catalogue::CATALOGUE;
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::sfn::gateway_proof::{self, GatewaySubject, Verdict};

// The allocator the command line uses, so the figures are the ones `tpf-sfn mapping-test` sees.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The calling thread's CPU time so far, where the kernel tells it.
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Wall and CPU time of `runs` calls.
#[derive(Debug, Clone, Copy)]
struct Sample {
    runs: u32,
    wall: Duration,
    cpu: Option<Duration>,
}

fn sample(runs: u32, mut f: impl FnMut()) -> Sample {
    let cpu = thread_cpu();
    let t = Instant::now();
    for _ in 0..runs {
        f();
    }
    let wall = t.elapsed();
    Sample {
        runs,
        wall,
        cpu: cpu.zip(thread_cpu()).map(|(a, b)| b.saturating_sub(a)),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `median (min)` of the samples' wall time per run, in milliseconds.
fn wall(samples: &[Sample]) -> String {
    let mut per_run: Vec<f64> = samples
        .iter()
        .map(|s| ms(s.wall) / f64::from(s.runs))
        .collect();
    per_run.sort_by(f64::total_cmp);
    match per_run.first() {
        Some(min) => format!("{:.2} ({:.2})", per_run[per_run.len() / 2], min),
        None => "n/a".to_owned(),
    }
}

/// The mean CPU time per run over every sample, in milliseconds.
fn cpu(samples: &[Sample]) -> String {
    let runs: u32 = samples.iter().map(|s| s.runs).sum();
    let total: Option<Duration> = samples.iter().map(|s| s.cpu).sum();
    match total {
        Some(t) if runs > 0 => format!("{:.2}", ms(t) / f64::from(runs)),
        _ => "n/a".to_owned(),
    }
}

fn setting(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(default)
}

/// One catalogue run on `s`; every scenario must pass or fail as declared, so a figure is never
/// one of a broken run.
fn catalogue(label: &str, s: &GatewaySubject) -> usize {
    let reports = s.run_catalogue().expect("the compiled driver runs");
    for r in &reports {
        if let Verdict::Failed { checks, assertion } = s.verdict(r) {
            panic!("{label}: {} failed: {checks:?} {assertion:?}", r.name);
        }
    }
    black_box(reports.len())
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn main() {
    let input = tpf_sfn_compiler::bundled::august_restaurant_input();
    let engines: [(&str, GatewaySubject); 2] = [
        (
            "Step Functions",
            gateway_proof::subject(&input, None).expect("restaurant compiles"),
        ),
        (
            "Lambda durable",
            gateway_proof::durable_subject(&input).expect("restaurant compiles"),
        ),
    ];
    let rounds = setting("TPF_BENCH_GATEWAY_RUNS", 10);
    let batch = setting("TPF_BENCH_GATEWAY_BATCH", 10);
    let runnable: Vec<_> = CATALOGUE.iter().filter(|s| s.runs).collect();

    println!(
        "tpf-sfn gateway-world benchmark (restaurant-approval, gateway binding; {} scenarios × {} checks; {rounds} rounds, scenarios {batch} times a round; load average {} at start)",
        runnable.len(),
        GatewayCheck::ALL.len(),
        load()
    );

    // Warm-up: one catalogue run per engine (allocator, lazily built tables).
    for (label, s) in &engines {
        catalogue(label, s);
    }

    let mut whole: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    let mut each: Vec<[Vec<Sample>; 2]> = runnable.iter().map(|_| [vec![], vec![]]).collect();
    for _ in 0..rounds {
        for (e, (label, s)) in engines.iter().enumerate() {
            whole[e].push(sample(1, || {
                catalogue(label, s);
            }));
        }
        for (i, info) in runnable.iter().enumerate() {
            for (e, (label, s)) in engines.iter().enumerate() {
                each[i][e].push(sample(batch, || {
                    let (report, _) = s.run_one(info).expect("the compiled driver runs");
                    assert!(
                        !matches!(s.verdict(&report), Verdict::Failed { .. }),
                        "{label}: {} failed",
                        report.name
                    );
                    black_box(report);
                }));
            }
        }
    }

    println!("\nms per run: wall median (min) of {rounds} rounds; cpu mean of every run");
    println!(
        "{:<48} {:>16} {:>16} {:>16} {:>16}",
        "", "sfn wall", "sfn cpu", "durable wall", "durable cpu"
    );
    let row = |name: &str, [sfn, durable]: &[Vec<Sample>; 2]| {
        println!(
            "{:<48} {:>16} {:>16} {:>16} {:>16}",
            name,
            wall(sfn),
            cpu(sfn),
            wall(durable),
            cpu(durable)
        );
    };
    row("whole catalogue", &whole);
    for (info, samples) in runnable.iter().zip(&each) {
        row(info.name, samples);
    }
    println!("\nload average at end: {}", load());
}
