//! The scenario matrix derived from a contract: the same questions asked of every pipeline,
//! and per-await questions asked of every await step.

use super::model::{Action, Do, Expect, RetryOverride, Scenario, When, WorkerScript};
use super::run::Subject;
use crate::harness::faults::{Fault, FaultPlan, Outage};

fn act(when: When, step: Option<&str>, nth: Option<u32>, after_seconds: u64, act: Do) -> Action {
    Action {
        when,
        step: step.map(str::to_string),
        nth,
        after_seconds,
        act,
    }
}

fn base(name: &str, description: &str) -> Scenario {
    Scenario {
        name: name.to_string(),
        description: description.to_string(),
        faults: FaultPlan::default(),
        worker: Vec::new(),
        retries: None,
        actions: Vec::new(),
        expect: Expect::default(),
        horizon_seconds: 6 * 3600,
        sweeper_every_seconds: None,
        await_timeout_seconds: 1800,
    }
}

/// Completes the n-th park five minutes after it happens, for every park the contract has.
fn complete_every_park(subject: &Subject) -> Vec<Action> {
    (1..=subject.plan.awaits.len() as u32)
        .map(|n| act(When::Parked, None, Some(n), 300, Do::CompleteAwait))
        .collect()
}

/// A step that is not an await, for failure scripts: the last one (it runs after every await).
fn failing_step(subject: &Subject) -> Option<String> {
    subject
        .contract
        .steps
        .iter()
        .rev()
        .find(|s| !s.is_await())
        .map(|s| s.authored_name.clone())
}

pub fn derive(subject: &Subject) -> Vec<Scenario> {
    let mut out = Vec::new();
    let succeed = Expect {
        tpf_status: Some("SUCCEEDED".into()),
        ..Expect::default()
    };

    let mut s = base(
        "happy-path",
        "every await completes five minutes after it parks",
    );
    s.actions = complete_every_park(subject);
    s.expect = Expect {
        lineages: Some(1),
        ..succeed.clone()
    };
    out.push(s);

    let mut s = base(
        "duplicate-submit",
        "the same idempotency key is submitted twice: one execution, one lineage",
    );
    s.actions = complete_every_park(subject);
    s.actions
        .push(act(When::Start, None, None, 1, Do::SubmitDuplicate));
    s.expect = Expect {
        lineages: Some(1),
        ..succeed.clone()
    };
    out.push(s);

    for (k, a) in subject.plan.awaits.iter().enumerate() {
        let nth = Some(k as u32 + 1);
        let name = &a.authored_name;
        let others = |skip: bool| -> Vec<Action> {
            (1..=subject.plan.awaits.len() as u32)
                .filter(|n| !(skip && *n == k as u32 + 1))
                .map(|n| act(When::Parked, None, Some(n), 300, Do::CompleteAwait))
                .collect()
        };

        let mut s = base(
            &format!("duplicate-complete/{name}"),
            "the completion is delivered twice: exactly one resume",
        );
        s.actions = others(true);
        s.actions
            .push(act(When::Parked, None, nth, 300, Do::CompleteAwaitTwice));
        s.expect = succeed.clone();
        out.push(s);

        let mut s = base(
            &format!("complete-before-park/{name}"),
            "the completion lands after TPF parks but before the driver registers its wakeup token",
        );
        s.actions = others(true);
        s.actions.push(act(
            When::Start,
            Some(name),
            None,
            0,
            Do::CompleteBeforePark,
        ));
        s.expect = succeed.clone();
        out.push(s);

        let mut s = base(
            &format!("deadline-timeout/{name}"),
            "nobody completes the await: its deadline wakes the driver and TPF fails it",
        );
        s.actions = others(true).into_iter().filter(|x| x.nth < nth).collect();
        s.expect = Expect {
            tpf_status: Some("FAILED".into()),
            error_code: Some("AWAIT_TIMEOUT".into()),
            ..Expect::default()
        };
        out.push(s);

        let mut s = base(
            &format!("lost-wakeup/{name}"),
            "the bridge loses every wakeup: the sweeper finds the due execution and wakes the parked driver",
        );
        s.actions = others(false);
        s.faults.lose_wakeups = true;
        s.sweeper_every_seconds = Some(60);
        s.expect = succeed.clone();
        out.push(s);
    }

    if let Some(step) = failing_step(subject) {
        let mut s = base(
            "retries-then-success",
            "a step fails twice (TPF schedules retries), then succeeds",
        );
        s.actions = complete_every_park(subject);
        s.worker = vec![WorkerScript {
            step: step.clone(),
            outcomes: vec![
                "fail-retryable:TransientError".into(),
                "fail-retryable:TransientError".into(),
                "complete".into(),
            ],
        }];
        s.expect = succeed.clone();
        out.push(s);

        let mut s = base(
            "retries-exhausted-then-redrive",
            "a step fails until TPF gives up (FAILED); an operator re-drives it in TPF; a new lineage on the same machine succeeds",
        );
        s.actions = complete_every_park(subject);
        s.actions
            .push(act(When::TpfFailed, None, None, 120, Do::Redrive));
        s.worker = vec![WorkerScript {
            step: step.clone(),
            outcomes: ["fail-retryable:TransientError"; 4]
                .iter()
                .map(|x| x.to_string())
                .chain(["complete".to_string()])
                .collect(),
        }];
        s.expect = Expect {
            lineages: Some(2),
            ..succeed.clone()
        };
        out.push(s);

        let mut s = base(
            "non-retryable-failure",
            "a step fails non-retryably: TPF fails the execution, the driver fails with TPF's code",
        );
        s.actions = complete_every_park(subject);
        s.worker = vec![WorkerScript {
            step: step.clone(),
            outcomes: vec!["fail-non-retryable:InvalidDecision".into()],
        }];
        s.expect = Expect {
            tpf_status: Some("FAILED".into()),
            ..Expect::default()
        };
        out.push(s);

        let mut s = base(
            "driver-aborted-then-swept",
            "an operator stops the driver while TPF waits to retry; the sweeper starts a recovery generation",
        );
        s.actions = complete_every_park(subject);
        s.actions
            .push(act(When::TpfWaitRetry, None, None, 1, Do::AbortDriver));
        s.worker = vec![WorkerScript {
            step: step.clone(),
            outcomes: vec!["fail-retryable:TransientError".into(), "complete".into()],
        }];
        s.sweeper_every_seconds = Some(60);
        s.expect = Expect {
            lineages: Some(2),
            ..succeed.clone()
        };
        out.push(s);

        let iterations = subject.sfn.budget.max_iterations as usize + 20;
        let mut s = base(
            "history-rollover",
            "a step is retried more times than one generation's history budget allows: the driver continues as new",
        );
        s.actions = complete_every_park(subject);
        s.retries = Some(RetryOverride {
            max_retries: iterations as u32 + 5,
            delay_seconds: 1,
            multiplier: 1.0,
        });
        s.worker = vec![WorkerScript {
            step,
            outcomes: std::iter::repeat_n("fail-retryable:Flaky".to_string(), iterations)
                .chain(["complete".to_string()])
                .collect(),
        }];
        s.horizon_seconds = 24 * 3600;
        s.expect = Expect {
            min_generations: Some(2),
            ..succeed.clone()
        };
        out.push(s);
    }

    let mut s = base(
        "new-release-mid-flight",
        "a new release is activated while the execution is parked: it stays pinned; a new submission pins the new release",
    );
    s.actions = complete_every_park(subject);
    s.actions
        .push(act(When::Parked, None, Some(1), 60, Do::ActivateNewRelease));
    if subject.plan.awaits.is_empty() {
        s.actions
            .push(act(When::Start, None, None, 0, Do::ActivateNewRelease));
    }
    s.expect = succeed.clone();
    out.push(s);

    let mut s = base(
        "console-redrive",
        "the action endpoint is down long enough to exhaust the driver's transport retries; an operator redrives the failed driver in the console",
    );
    s.actions = complete_every_park(subject);
    s.actions
        .push(act(When::DriverFailed, None, None, 60, Do::ConsoleRedrive));
    s.faults.outage = Some(Outage {
        after_calls: 1,
        failures: subject.plan.transport_retry.max_attempts as u32 + 1,
    });
    s.expect = Expect {
        lineages: Some(1),
        ..succeed.clone()
    };
    out.push(s);

    let mut s = base(
        "transport-faults",
        "every action call first fails (503 / service error), then loses its reply after TPF applied it, then is delivered twice",
    );
    s.actions = complete_every_park(subject);
    s.faults.per_call = vec![Fault::Unavailable, Fault::LostReply, Fault::Duplicate];
    s.expect = succeed;
    out.push(s);

    out
}
