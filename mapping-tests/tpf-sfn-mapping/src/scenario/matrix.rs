//! The scenario matrix derived from a contract: the same questions asked of every pipeline,
//! and per-await questions asked of every await step.

use super::model::{
    Action, Do, Expect, ItemContinuationMode, RetryOverride, Scenario, TpfVariant, When,
    WorkerScript,
};
use serde::Serialize;

use super::classes::{classify, AwaitClasses};
use crate::harness::faults::{Fault, FaultPlan, Outage};
use crate::subject::{Program, Subject};

fn act(when: When, step: Option<&str>, nth: Option<u32>, after_seconds: u64, act: Do) -> Action {
    Action {
        when,
        step: step.map(str::to_string),
        nth,
        after_seconds,
        act,
    }
}

/// Await deadline the derived scenarios give every await (the contract carries none).
pub(crate) const AWAIT_TIMEOUT_S: u64 = 1800;
/// Delay after a park at which the derived scenarios complete the await.
const COMPLETE_AFTER_S: u64 = 300;
/// The error code the derived scenarios' unconfirmed remote transition leaves on TPF's record.
const REMOTE_DEADLINE_CODE: &str = "RemoteDeadlineExceeded";
/// The least virtual time any derived scenario gets.
const MIN_HORIZON_S: u64 = 6 * 3600;

/// Virtual time the derived scenarios may take, from the contract: a scenario runs every await
/// in turn, and each can cost its whole deadline (the timeout scenarios) or its completion
/// delay plus a sweeper period (the lost-wakeup ones); TPF's retry back-off, at its default
/// retries, can add its full sum; each step gets a second. A fixed horizon made a contract with
/// 75 awaits end its happy path while still parked.
pub fn horizon_seconds<P: Program>(subject: &Subject<P>) -> u64 {
    let tpf = tpf_model::coordinator::CoordinatorConfig::default();
    let backoff_ms: i64 = (1..=i64::from(tpf.max_retries))
        .map(|n| tpf.retry_delay_for(n))
        .sum();
    let awaits = subject.plan.awaits.len() as u64;
    let per_await = AWAIT_TIMEOUT_S.max(COMPLETE_AFTER_S + 60) + 60;
    let derived = 3600
        + awaits.saturating_mul(per_await)
        + u64::try_from(backoff_ms / 1000).unwrap_or(0)
        + subject.contract.steps.len() as u64;
    derived.max(MIN_HORIZON_S)
}

fn base(horizon_seconds: u64, name: &str, description: &str) -> Scenario {
    Scenario {
        name: name.to_string(),
        description: description.to_string(),
        faults: FaultPlan::default(),
        worker: Vec::new(),
        retries: None,
        actions: Vec::new(),
        expect: Expect::default(),
        horizon_seconds,
        sweeper_every_seconds: None,
        await_timeout_seconds: AWAIT_TIMEOUT_S,
        tpf: TpfVariant::default(),
    }
}

/// Completes the n-th park five minutes after it happens, for every park the contract has.
fn complete_every_park<P: Program>(subject: &Subject<P>) -> Vec<Action> {
    (1..=subject.plan.awaits.len() as u32)
        .map(|n| {
            act(
                When::Parked,
                None,
                Some(n),
                COMPLETE_AFTER_S,
                Do::CompleteAwait,
            )
        })
        .collect()
}

/// The steps an itemized await's items run in their child executions: from the step after the
/// await up to the first aggregate step (`firstAggregateStepIndex`).
fn continuation_steps<P: Program>(subject: &Subject<P>, await_index: u32) -> std::ops::Range<u32> {
    let steps = &subject.contract.steps;
    let from = await_index + 1;
    let to = steps
        .iter()
        .skip(from as usize)
        .find(|s| s.cardinality.aggregates())
        .map_or(steps.len() as u32, |s| s.index);
    from..to
}

/// Whether the execution's own segments run `step` (not an item's child execution).
fn parent_runs<P: Program>(subject: &Subject<P>, step: u32) -> bool {
    subject
        .plan
        .awaits
        .iter()
        .filter(|a| a.itemized)
        .all(|a| !continuation_steps(subject, a.step_index).contains(&step))
}

/// A step the execution itself runs that is not an await, for failure scripts: the last one
/// (it runs after every await the execution parks on).
fn failing_step<P: Program>(subject: &Subject<P>) -> Option<String> {
    subject
        .contract
        .steps
        .iter()
        .rev()
        .find(|s| !s.is_await() && parent_runs(subject, s.index))
        .map(|s| s.authored_name.clone())
}

/// Re-asks a driver may make about one parked execution whose await deadline passed without
/// TPF applying it, over `horizon_seconds`: the call that parks, the one at the deadline, one per
/// doubling of the back-off up to its cap, then one per cap interval.
pub fn late_reask_bound<P: Program>(subject: &Subject<P>, horizon_seconds: u64) -> u64 {
    let (first, cap) = (
        subject.plan.wakeup.late_recheck_seconds.max(1),
        subject.plan.wakeup.late_recheck_max_seconds.max(1),
    );
    let mut doublings = 0;
    let mut wait = first;
    while wait < cap {
        wait = wait.saturating_mul(2);
        doublings += 1;
    }
    2 + doublings + horizon_seconds.div_ceil(cap)
}

/// The per-await families for the `k`-th await of the plan.
fn per_await<P: Program>(subject: &Subject<P>, horizon: u64, k: usize) -> Vec<Scenario> {
    let base = |name: &str, description: &str| base(horizon, name, description);
    let succeed = Expect {
        tpf_status: Some("SUCCEEDED".into()),
        ..Expect::default()
    };
    let mut out = Vec::new();
    let Some(a) = subject.plan.awaits.get(k) else {
        return out;
    };
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

    if a.itemized {
        let items = Some(crate::subject::ITEMS_PER_STREAM);
        let mut s = base(
            &format!("items-in-process/{name}"),
            "TPF as it is today runs each item's continuation inside the completion call and writes its child execution already SUCCEEDED: the child drivers the bridge starts find nothing to do",
        );
        s.actions = others(false);
        s.tpf.item_continuations = ItemContinuationMode::InProcess;
        s.expect = Expect {
            item_executions: items,
            ..succeed.clone()
        };
        out.push(s);

        if let Some(step) = continuation_steps(subject, a.step_index)
            .next()
            .and_then(|i| subject.contract.steps.get(i as usize))
        {
            let retryable = "fail-retryable:java.io.IOException".to_string();
            let mut s = base(
                &format!("item-continuation-retried/{name}"),
                "each item's continuation fails twice: every retry is a scheduled wakeup of the item's own driver, then all items succeed and release the parent",
            );
            s.actions = others(false);
            s.worker = vec![WorkerScript {
                step: step.authored_name.clone(),
                outcomes: vec![retryable.clone(), retryable.clone(), "complete".into()],
            }];
            s.expect = Expect {
                item_executions: items,
                ..succeed.clone()
            };
            out.push(s);

            let mut s = base(
                &format!("item-continuation-fails/{name}"),
                "the items' continuations fail on every attempt: after the third TPF fails the parent with AWAIT_ITEM_CONTINUATION_FAILED",
            );
            s.actions = others(false);
            s.worker = vec![WorkerScript {
                step: step.authored_name.clone(),
                outcomes: vec![retryable; 3],
            }];
            s.expect = Expect {
                tpf_status: Some("FAILED".into()),
                error_code: Some("AWAIT_ITEM_CONTINUATION_FAILED".into()),
                item_executions: items,
                ..Expect::default()
            };
            out.push(s);
        }
    }

    if k == 0 {
        // 31 minutes after the park: a minute past the 30-minute deadline, before the hourly
        // sweep. TPF marks the interaction TIMED_OUT and leaves the parent parked; its sweep
        // skips terminal interactions, so nothing ever moves the parent again.
        let horizon = 3 * 24 * 3600;
        let mut s = base(
            &format!("late-completion-strands-parent/{name}"),
            "against a TPF without the Action API's deadline rule, a completion a minute late strands the parent for good: the driver's re-asks back off to one a day",
        );
        s.actions = vec![act(When::Parked, None, nth, 1860, Do::CompleteAwait)];
        s.tpf.process_applies_await_deadline = false;
        s.sweeper_every_seconds = Some(3600);
        s.horizon_seconds = horizon;
        s.expect = Expect {
            tpf_status: Some("WAITING_EXTERNAL".into()),
            max_action_calls: Some(late_reask_bound(subject, horizon)),
            ..Expect::default()
        };
        out.push(s);
    }
    out
}

/// The matrix for the subject's program.
pub fn derive<P: Program>(subject: &Subject<P>) -> Vec<Scenario> {
    derive_for(subject, subject.program.max_iterations())
}

/// The matrix for a driver that hands over after `max_iterations` calls: the rollover scenario
/// retries a step past it, whatever the engine.
pub fn derive_for<P: Program>(subject: &Subject<P>, max_iterations: u64) -> Vec<Scenario> {
    let horizon = horizon_seconds(subject);
    let base = |name: &str, description: &str| base(horizon, name, description);
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

    // Per-await families on one await per class of identical await states (plus the first
    // and last): every await is still visited, and so routed, by the whole-pipeline scenarios.
    for k in classify(subject).representatives {
        out.extend(per_await(subject, horizon, k));
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
            "remote-outcome-unknown-then-redrive",
            "a step's worker passes its caller deadline unconfirmed: TPF marks the execution REMOTE_OUTCOME_UNKNOWN and the driver stops with TPF.RemoteOutcomeUnknown; an operator re-drives it in TPF (allowFailed); a new lineage on the same machine succeeds",
        );
        s.actions = complete_every_park(subject);
        s.actions.push(act(
            When::TpfRemoteOutcomeUnknown,
            None,
            None,
            600,
            Do::Redrive,
        ));
        s.worker = vec![WorkerScript {
            step: step.clone(),
            outcomes: vec![
                format!("remote-outcome-unknown:{REMOTE_DEADLINE_CODE}"),
                "complete".into(),
            ],
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

        let iterations = usize::try_from(max_iterations).unwrap_or(usize::MAX / 2) + 20;
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
        s.horizon_seconds = horizon.max(24 * 3600) + iterations as u64;
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
    s.expect = succeed.clone();
    out.push(s);

    let mut s = base(
        "lease-held-elsewhere",
        "another TPF worker claims the execution just before the driver's first call and dies holding the lease: the driver waits for the lease, then claims it",
    );
    s.actions = complete_every_park(subject);
    s.actions
        .push(act(When::Start, None, None, 0, Do::TakeLeaseFirst));
    s.expect = Expect {
        lineages: Some(1),
        ..succeed.clone()
    };
    out.push(s);

    if !subject.plan.awaits.is_empty() {
        let mut s = base(
            "token-registration-fails",
            "the first two wakeup-token registrations fail (the wakeup table is missing): the driver re-checks TPF after a pause instead of parking without a wakeup, then parks",
        );
        s.actions = complete_every_park(subject);
        s.faults.fail_token_registrations = 2;
        s.expect = succeed;
        out.push(s);
    }

    out
}

/// One per-await family: the awaits it stands for and the ones it ran on.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FamilyCoverage {
    pub family: String,
    /// Awaits whose class contains an await the family ran on.
    pub awaits_covered: usize,
    pub ran_on: Vec<String>,
}

/// What the per-await families cover, for the report: the classes, and per family the awaits
/// it stands for and the representatives it ran on.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    #[serde(flatten)]
    pub classes: AwaitClasses,
    pub families: Vec<FamilyCoverage>,
}

pub fn coverage<P: Program>(subject: &Subject<P>) -> Coverage {
    let classes = classify(subject);
    let horizon = horizon_seconds(subject);
    let mut families: Vec<(FamilyCoverage, Vec<usize>)> = Vec::new();
    for &k in &classes.representatives {
        for s in per_await(subject, horizon, k) {
            let family = s.name.split_once('/').map_or(s.name.as_str(), |(f, _)| f);
            let i = match families.iter().position(|(f, _)| f.family == family) {
                Some(i) => i,
                None => {
                    families.push((
                        FamilyCoverage {
                            family: family.to_string(),
                            awaits_covered: 0,
                            ran_on: Vec::new(),
                        },
                        Vec::new(),
                    ));
                    families.len() - 1
                }
            };
            families[i]
                .0
                .ran_on
                .push(subject.plan.awaits[k].authored_name.clone());
            families[i].1.push(k);
        }
    }
    let families = families
        .into_iter()
        .map(|(mut f, ran)| {
            f.awaits_covered = classes
                .classes
                .iter()
                .filter(|c| c.members.iter().any(|m| ran.contains(m)))
                .map(|c| c.awaits)
                .sum();
            f
        })
        .collect();
    Coverage { classes, families }
}
