//! `cargo bench -p tpf-sfn-mapping --bench matrix`
//!
//! Prints figures; asserts nothing about speed: the full scenario matrix for the restaurant
//! contract, simulated driver executions per second, and the parked driver's cost next to a
//! polling driver's on the same scenario.

use std::hint::black_box;
use std::time::Instant;

use tpf_sfn_mapping::proof;

fn main() {
    let input = proof::restaurant_input();
    let subject = proof::subject(&input, None).expect("restaurant compiles");
    let scenarios = proof::scenarios(&subject, Vec::new());

    println!("tpf-sfn mapping benchmark (restaurant-approval, http binding)");
    let mut times = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let reports = proof::prove(&subject, &scenarios, proof::SEED);
        times.push(t.elapsed());
        assert!(reports.iter().all(|r| r.passed()));
    }
    times.sort();
    println!(
        "full matrix ({} scenarios × {} checks): median {:.1} ms, min {:.1} ms (10 runs)",
        scenarios.len(),
        tpf_sfn_mapping::invariants::CHECKS.len(),
        times[5].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3
    );

    let happy = scenarios
        .iter()
        .find(|s| s.name == "happy-path")
        .expect("happy path");
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        black_box(tpf_sfn_mapping::scenario::run(&subject, happy, proof::SEED).ok());
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "simulated happy-path driver executions: {:.0} per second ({n} runs in {:.2} s)",
        n as f64 / secs,
        secs
    );

    println!("\nparked (callback token) vs polling driver, same scenarios:");
    println!(
        "{:<48} {:>12} {:>12} {:>8}",
        "scenario / driver", "transitions", "events", "calls"
    );
    for name in ["happy-path", "deadline-timeout/Await Restaurant Decision"] {
        let s = scenarios.iter().find(|s| s.name == name).expect("scenario");
        for (label, subj) in [
            ("parked", subject.clone()),
            ("polling every 15 s", proof::polling_variant(&subject, 15)),
            ("polling every 60 s", proof::polling_variant(&subject, 60)),
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
