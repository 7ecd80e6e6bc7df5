//! "Paced by TPF": the driver asks TPF no faster than TPF's answers allow, and never sleeps
//! past what they allow. The other families say *where* the driver goes after an answer; these
//! say *when* it comes back: a driver that re-asks at once spends a budget of calls on nothing
//! (and, unbounded, never gives the gate a verdict), one that sleeps for years strands the
//! execution while TPF waits for it.

use std::collections::BTreeMap;

use super::checks::{belongs, driver, excerpt, executions, is_await, v};
use super::Violation;
use crate::harness::trace::{clock, Entry, Trace};
use crate::scenario::budget::{GENERATIONS_PER_WINDOW, GENERATION_WINDOW_MS};
use crate::scenario::run::driver_executions;
use crate::scenario::Run;
use asl_interp::engine::ExecutionStatus;

/// The shortest pause a re-ask after an unchanged answer may take: anything shorter is the
/// same instant to TPF's leases and due times, which are whole seconds.
const MIN_PAUSE_MS: i64 = 1_000;

pub(super) fn within_budget(run: &Run) -> Vec<Violation> {
    let (b, m) = (&run.budget, &run.metrics);
    let mut out = Vec::new();
    let end = clock(run.world.now_ms() - run.world.trace.start_ms);
    if run.budget_spent {
        out.push(v(
            "run-within-budget",
            format!(
                "the run reached its budget of {} history events at {end} of virtual time and was stopped there: the driver does more work than this scenario can justify (a loop that does not wait, or a hand-over that starts the next generation at once)",
                b.events
            ),
            String::new(),
        ));
    }
    if m.action_calls > b.action_calls {
        out.push(v(
            "run-within-budget",
            format!(
                "{} process-work-item calls, over the scenario's budget of {}",
                m.action_calls, b.action_calls
            ),
            String::new(),
        ));
    }
    if m.state_transitions > b.state_transitions {
        out.push(v(
            "run-within-budget",
            format!(
                "{} state transitions, over the scenario's budget of {}",
                m.state_transitions, b.state_transitions
            ),
            String::new(),
        ));
    }
    out
}

/// The process-work-item calls of one driver execution: (trace index, time, key, answer).
fn calls_by_execution(trace: &Trace) -> BTreeMap<&str, Vec<(usize, i64, &str, &str)>> {
    let mut out: BTreeMap<&str, Vec<(usize, i64, &str, &str)>> = BTreeMap::new();
    for (i, e) in trace.entries.iter().enumerate() {
        if let Entry::Call {
            at_ms,
            execution,
            action,
            key,
            status: Some(_),
            outcome,
            ..
        } = e
        {
            if action == "process-work-item" {
                out.entry(execution.as_str()).or_default().push((
                    i,
                    *at_ms,
                    key.as_deref().unwrap_or(""),
                    outcome.as_str(),
                ));
            }
        }
    }
    out
}

/// A new call (a new key) within a second of the last one, whose answer is the same as the
/// last one's: nothing changed in TPF and nothing was waited for, so the call was wasted.
pub(super) fn calls_paced(run: &Run) -> Vec<Violation> {
    let trace = &run.world.trace;
    let mut out = Vec::new();
    for (execution, calls) in calls_by_execution(trace) {
        let mut repeats = 0usize;
        let mut first = None;
        for pair in calls.windows(2) {
            let [(_, t0, k0, a0), (i1, t1, k1, a1)] = pair else {
                continue;
            };
            if k0 != k1 && t1 - t0 < MIN_PAUSE_MS && a0 == a1 {
                repeats += 1;
                first.get_or_insert((*i1, *t1, a1.to_string()));
            }
        }
        if let Some((i, t, answer)) = first {
            out.push(v(
                "calls-paced-by-tpf",
                format!(
                    "{execution} asked TPF again at {} without waiting although nothing had changed (answer {answer:?}), {repeats} time(s) in all: a re-ask must wait for what TPF's answer names (nextDueAt, the lease, a wakeup)",
                    clock(t - trace.start_ms)
                ),
                excerpt(trace, i),
            ));
        }
    }
    out
}

/// More driver generations of one TPF execution starting within a minute than hand-overs,
/// re-drives and recoveries can explain: continue-as-new in a loop.
pub(super) fn generations_paced(run: &Run) -> Vec<Violation> {
    let w = &run.world;
    let mut out = Vec::new();
    for exec in executions(run) {
        let starts: Vec<i64> = driver_executions(w, &exec)
            .iter()
            .filter_map(|arn| w.engine.describe_execution(arn).ok().map(|d| d.start_ms))
            .collect();
        let crowded = starts
            .windows(GENERATIONS_PER_WINDOW + 1)
            .find(|win| win[GENERATIONS_PER_WINDOW] - win[0] < GENERATION_WINDOW_MS);
        if let Some(win) = crowded {
            out.push(v(
                "generations-paced",
                format!(
                    "{} driver generations of {exec} started between {} and {} ({} in all): each generation must spend its counted loop, and every loop iteration waits, before it hands over",
                    GENERATIONS_PER_WINDOW + 1,
                    clock(win[0] - w.trace.start_ms),
                    clock(win[GENERATIONS_PER_WINDOW] - w.trace.start_ms),
                    starts.len()
                ),
                String::new(),
            ));
        }
    }
    out
}

/// The next new call (another key) of the same TPF execution after trace entry `i`.
fn next_call<'a>(trace: &'a Trace, i: usize, exec: &str, key: Option<&str>) -> Option<&'a Entry> {
    trace.entries[i + 1..].iter().find(|x| {
        matches!(x, Entry::Call { execution, action, key: k, .. }
            if action == "process-work-item" && belongs(execution, exec) && (key.is_none() || k.as_deref() != key))
    })
}

/// Whether a driver of `exec` is still running at the end of the run (asleep, or parked).
fn still_running(run: &Run, exec: &str) -> bool {
    driver_executions(&run.world, exec)
        .iter()
        .any(|arn| run.world.engine.status(arn) == Some(ExecutionStatus::Running))
}

/// Until when the run watched: a run that stops with a driver still running stopped because
/// nothing was due before the horizon, so the horizon was watched too.
fn watched_until(run: &Run, exec: &str) -> i64 {
    let horizon = run.world.trace.start_ms + run.scenario.horizon_seconds as i64 * 1000;
    if still_running(run, exec) && !run.budget_spent {
        run.world.now_ms().max(horizon)
    } else {
        run.world.now_ms()
    }
}

/// A re-ask after trace entry `i` (at `from`) must come within `[from + 1 s, latest]`.
#[allow(clippy::too_many_arguments)]
fn bounded_reask(
    run: &Run,
    name: &'static str,
    what: &str,
    exec: &str,
    i: usize,
    from: i64,
    key: Option<&str>,
    latest: i64,
) -> Option<Violation> {
    let trace = &run.world.trace;
    let at = |t: i64| clock(t - trace.start_ms);
    match next_call(trace, i, exec, key) {
        Some(e) if e.at_ms() - from < MIN_PAUSE_MS => Some(v(
            name,
            format!(
                "after {what} at {}, {exec}'s driver asked TPF again at {} without pausing",
                at(from),
                at(e.at_ms())
            ),
            excerpt(trace, i),
        )),
        Some(e) if e.at_ms() > latest => Some(v(
            name,
            format!(
                "after {what} at {}, {exec}'s driver slept until {}, past {} (the latest re-ask this answer allows)",
                at(from),
                at(e.at_ms()),
                at(latest)
            ),
            excerpt(trace, i),
        )),
        None if watched_until(run, exec) > latest && still_running(run, exec) => Some(v(
            name,
            format!(
                "after {what} at {}, {exec}'s driver had not asked TPF again by {}, past {} (the latest re-ask this answer allows)",
                at(from),
                at(watched_until(run, exec)),
                at(latest)
            ),
            excerpt(trace, i),
        )),
        _ => None,
    }
}

/// After TPF answers RUNNING without this call claiming it (another claimant holds the lease
/// until `nextDueAt`), the driver re-asks no sooner than a second later and no later than the
/// lease expiry or the configured lease wait, whichever is later: sooner only spins on the
/// lease, later leaves the execution unattended after a dead claimant's lease runs out.
pub(super) fn lease_wait_bounded(run: &Run) -> Vec<Violation> {
    let trace = &run.world.trace;
    let wait_ms = run.subject.plan.wakeup.lease_wait_seconds as i64 * 1000;
    let mut out = Vec::new();
    for exec in executions(run) {
        for (i, e) in trace.entries.iter().enumerate() {
            let Entry::Call {
                at_ms,
                execution,
                action,
                key,
                status: Some(status),
                next_due_ms,
                outcome,
                ..
            } = e
            else {
                continue;
            };
            if action != "process-work-item"
                || status != "RUNNING"
                || outcome.split_whitespace().nth(2) == Some(tpf_wire::action::field::CLAIMED)
                || !belongs(execution, &exec)
            {
                continue;
            }
            let latest = next_due_ms.unwrap_or(*at_ms).max(*at_ms + wait_ms) + MIN_PAUSE_MS;
            out.extend(bounded_reask(
                run,
                "lease-wait-bounded",
                "TPF answered that another claimant holds the lease",
                &exec,
                i,
                *at_ms,
                key.as_deref(),
                latest,
            ));
        }
    }
    out
}

/// After a wakeup token could not be registered (the await Task failed at once), the driver
/// re-asks no sooner than a second later and no later than TPF's wake-up time for the await or
/// the configured re-check, whichever is later: with no token, no one will wake it.
pub(super) fn recheck_wait_bounded(run: &Run) -> Vec<Violation> {
    let trace = &run.world.trace;
    let m = driver(run);
    let recheck_ms = run.subject.plan.wakeup.recheck_seconds as i64 * 1000;
    let mut out = Vec::new();
    for exec in executions(run) {
        let mut wake_in_ms = 0;
        for (i, e) in trace.entries.iter().enumerate() {
            match e {
                Entry::Call {
                    execution,
                    wake_in_s: Some(s),
                    ..
                } if belongs(execution, &exec) => wake_in_ms = s.saturating_mul(1000),
                Entry::Driver {
                    at_ms,
                    execution,
                    sweeper: false,
                    event,
                    state: Some(st),
                    ..
                } if *event == "TaskFailed"
                    && belongs(execution, &exec)
                    && m.states.get(st).is_some_and(is_await) =>
                {
                    let latest = *at_ms + wake_in_ms.max(recheck_ms) + MIN_PAUSE_MS;
                    out.extend(bounded_reask(
                        run,
                        "recheck-wait-bounded",
                        &format!("the wakeup token of {st:?} could not be registered"),
                        &exec,
                        i,
                        *at_ms,
                        None,
                        latest,
                    ));
                }
                _ => {}
            }
        }
    }
    out
}
