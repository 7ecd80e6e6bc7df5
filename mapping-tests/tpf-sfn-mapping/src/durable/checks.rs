//! This backend's reading of every named check (`crate::invariants::CHECKS`). Checks that read
//! only the trace and TPF are the shared ones (`crate::invariants::common`) with this backend's
//! reading of its events; the ones the Step Functions proof answers from the ASL definition are
//! answered here from the driver's spec, its trace and the writes its steps made.

use durable_interp::{
    error, event, ExecutionStatus, OPERATION_CAP, SUBMITTER_SUFFIX, WRITTEN_STATE_CAP,
};
use tpf_durable_driver::driver::fail_error;
use tpf_durable_driver::{names, spec, DurableSpec};

use super::run::{driver_executions, DurableRun};
use super::world::CRASH;
use super::Subject;
use crate::harness::trace::{Entry, Trace};
use crate::invariants::common::{self, belongs, executions, record_timeline, Generation, Reading};
use crate::invariants::{self, excerpt, v, CheckId, Violation};
use crate::scenario::run::TENANT;

/// Evaluates every check of the table over a run.
pub fn evaluate(run: &DurableRun) -> Vec<Violation> {
    invariants::evaluate(run, reading)
}

/// How this backend answers each check of the table.
fn reading(id: CheckId, r: &DurableRun) -> Vec<Violation> {
    match id {
        CheckId::TransportOnlyRetries => transport_only_retries(r),
        CheckId::WritesOnlyTheWakeupTable => writes_only_wakeup_table(r),
        CheckId::RoutesFollowTpfOutcome => routes_follow_outcome(r),
        CheckId::RespectsTpfDueTime => common::respects_due_time(&r.world.trace),
        CheckId::DriverEndsAsTpfEnds => ends_as_tpf_ends(r),
        CheckId::SingleLiveGeneration => {
            common::single_live_generation(&r.world.trace, &|e| generations(r, e))
        }
        CheckId::ParksWithoutPolling => {
            common::parks_without_polling(&r.world.trace, r.world.now_ms(), &DurableReading)
        }
        CheckId::ResumeGoesThroughTpf => {
            common::resume_goes_through_tpf(&r.world.trace, &DurableReading)
        }
        CheckId::OneResumePerPark => common::one_resume_per_park(&r.world.trace, &DurableReading),
        CheckId::CallsCarryPinnedIdentity => calls_carry_pinned_identity(r),
        CheckId::RedriveContinuesSameExecution => {
            common::redrive_same_execution(&r.world.trace, &|e| generations(r, e))
        }
        CheckId::IdempotencyKeysAndSingleCommits => {
            common::idempotency(&r.world.trace, &r.world.host)
        }
        CheckId::HistoryWithinProvenBound => bounded_operations(r),
        CheckId::DefinitionWithinLimits => r.verdict.clone(),
        CheckId::RunWithinBudget => within_budget(r),
        CheckId::CallsPacedByTpf => common::calls_paced(&r.world.trace),
        CheckId::GenerationsPaced => generations_paced(r),
        CheckId::LeaseWaitBounded => common::lease_wait_bounded(r),
        CheckId::RecheckWaitBounded => common::recheck_wait_bounded(r, &DurableReading),
    }
}

/// How durable events read: a started operation is a move, a callback is a park.
pub(crate) struct DurableReading;

fn driver_event(e: &Entry) -> Option<(&'static str, &str)> {
    match e {
        Entry::Driver {
            event,
            state,
            sweeper: false,
            ..
        } => Some((*event, state.as_deref().unwrap_or(""))),
        _ => None,
    }
}

impl Reading for DurableReading {
    fn moved(&self, e: &Entry) -> bool {
        driver_event(e).is_some_and(|(ev, _)| {
            matches!(
                ev,
                event::STEP_STARTED
                    | event::WAIT_STARTED
                    | event::CALLBACK_STARTED
                    | event::CONTEXT_STARTED
            )
        })
    }

    fn park_timed_out(&self, e: &Entry) -> bool {
        driver_event(e).is_some_and(|(ev, _)| ev == event::CALLBACK_TIMED_OUT)
    }

    fn unregistered<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        match e {
            Entry::Driver {
                event: event::STEP_FAILED,
                state: Some(st),
                sweeper: false,
                ..
            } => st.strip_suffix(SUBMITTER_SUFFIX).map(str::trim_end),
            _ => None,
        }
    }

    fn left_park<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        match e {
            Entry::Driver {
                event,
                state: Some(st),
                sweeper: false,
                ..
            } if matches!(
                *event,
                event::CALLBACK_SUCCEEDED | event::CALLBACK_TIMED_OUT | event::CALLBACK_FAILED
            ) =>
            {
                Some(st)
            }
            _ => self.unregistered(e),
        }
    }

    fn woken(&self, e: &Entry) -> bool {
        driver_event(e).is_some_and(|(ev, _)| ev == event::CALLBACK_SUCCEEDED)
    }

    fn decides<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        match e {
            Entry::Driver {
                event,
                state,
                sweeper: false,
                ..
            } => match *event {
                event::EXECUTION_SUCCEEDED | event::EXECUTION_FAILED => Some(event),
                event::CALLBACK_STARTED => state.as_deref(),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The durable executions of `exec`, as the generation checks read them.
fn generations(run: &DurableRun, exec: &str) -> Vec<Generation> {
    let end = run.world.now_ms();
    driver_executions(&run.world, exec)
        .into_iter()
        .map(|x| Generation {
            name: x.name.clone(),
            start_ms: x.start_ms,
            end_ms: x.end_ms.unwrap_or(end),
            home: x.function_arn.clone(),
            handed_over_ms: x
                .history
                .iter()
                .find(|e| {
                    e.event_type == event::STEP_STARTED
                        && e.name.as_deref() == Some(names::HAND_OVER)
                })
                .map(|e| e.timestamp_ms),
        })
        .collect()
}

/// The driver retries a call (the same key) only after the call did not get TPF's answer, and
/// no more often than the spec's transport retry allows: every answer, a refusal included, is
/// TPF's decision. The Step Functions proof reads this from the definition's retriers; a
/// durable driver's retries are code, so they are read from what it did.
fn transport_only_retries(run: &DurableRun) -> Vec<Violation> {
    let trace = &run.world.trace;
    let limit = 1 + run.subject.program.spec.transport_retry.max_attempts;
    let mut out = Vec::new();
    // (execution, key) → (deliveries, whether one was answered)
    let mut seen: std::collections::BTreeMap<(&str, &str), (u64, bool)> = Default::default();
    for (i, e) in trace.entries.iter().enumerate() {
        let Entry::Call {
            execution,
            action,
            key: Some(key),
            fault,
            ..
        } = e
        else {
            continue;
        };
        if action != "process-work-item" {
            continue;
        }
        let entry = seen.entry((execution.as_str(), key.as_str())).or_default();
        if entry.1 {
            out.push(v(
                "transport-only-retries",
                format!("{execution} delivered call {key:?} again after TPF had answered it: only a lost or failed delivery may be retried (TPF owns retries and backoff)"),
                excerpt(trace, i),
            ));
        }
        entry.0 += 1;
        if entry.0 > limit {
            out.push(v(
                "transport-only-retries",
                format!("{execution} delivered call {key:?} {} times, more than the {limit} its transport retry allows", entry.0),
                excerpt(trace, i),
            ));
        }
        // Delivered but never answered to the driver: failed, lost, or the function died.
        entry.1 |= !matches!(
            fault.as_deref(),
            Some("unavailable") | Some("lostreply") | Some(CRASH)
        );
    }
    out
}

fn writes_only_wakeup_table(run: &DurableRun) -> Vec<Violation> {
    let table = &run.subject.plan.wakeup.table_name;
    let mut out = Vec::new();
    if &run.subject.program.spec.wakeup.table_name != table {
        out.push(v(
            "writes-only-the-wakeup-table",
            format!("the spec names table {:?} for the driver's rows; the driver may only touch the adapter's wakeup table {table:?}, never TPF's records", run.subject.program.spec.wakeup.table_name),
            String::new(),
        ));
    }
    if let Some(w) = run.world.local.writes.iter().find(|w| &w.table != table) {
        out.push(v(
            "writes-only-the-wakeup-table",
            format!("{} wrote its {} row to table {:?}; the driver may only touch the wakeup table {table:?}", w.execution, w.row, w.table),
            String::new(),
        ));
    }
    out
}

/// The next operation (or end) of `execution` after trace entry `i`.
fn next_act(
    trace: &Trace,
    i: usize,
    execution: &str,
) -> Option<(usize, &'static str, String, Option<String>)> {
    trace.entries[i + 1..]
        .iter()
        .enumerate()
        .find_map(|(k, x)| match x {
            Entry::Driver {
                execution: ex,
                event,
                state,
                detail,
                sweeper: false,
                ..
            } if ex == execution
                && matches!(
                    *event,
                    event::STEP_STARTED
                        | event::WAIT_STARTED
                        | event::CALLBACK_STARTED
                        | event::EXECUTION_SUCCEEDED
                        | event::EXECUTION_FAILED
                ) =>
            {
                Some((
                    i + 1 + k,
                    *event,
                    state.clone().unwrap_or_default(),
                    detail.clone(),
                ))
            }
            _ => None,
        })
}

fn routes_follow_outcome(run: &DurableRun) -> Vec<Violation> {
    let trace = &run.world.trace;
    let mut out = Vec::new();
    for (i, e) in trace.entries.iter().enumerate() {
        let Entry::Call {
            execution,
            action,
            status: Some(status),
            fault,
            wake_in_s,
            ..
        } = e
        else {
            continue;
        };
        // A lost reply or a crash after the delivery: the driver never read this answer.
        if action != "process-work-item"
            || matches!(fault.as_deref(), Some("lostreply") | Some(CRASH))
        {
            continue;
        }
        let Some((_, ev, name, detail)) = next_act(trace, i, execution) else {
            continue;
        };
        let waits = |n: &str| ev == event::WAIT_STARTED && name == n;
        let ok = (ev == event::STEP_STARTED && name == names::HAND_OVER)
            || match status.as_str() {
                "SUCCEEDED" => ev == event::EXECUTION_SUCCEEDED,
                "FAILED" | "DLQ" => {
                    ev == event::EXECUTION_FAILED
                        && detail.as_deref() == Some(fail_error::EXECUTION_FAILED)
                }
                // Unconfirmed: stop with the driver's own error, never re-ask or retry.
                "REMOTE_OUTCOME_UNKNOWN" => {
                    ev == event::EXECUTION_FAILED
                        && detail.as_deref() == Some(fail_error::REMOTE_OUTCOME_UNKNOWN)
                }
                // Parked although TPF reports the wake-up due now: park again, woken by the
                // bridge or re-asking after a back-off of at least a minute.
                "WAITING_EXTERNAL" if wake_in_s.is_some_and(|s| s <= 1) => {
                    ev == event::CALLBACK_STARTED
                        && name == names::LATE
                        && common::backs_off(trace, i, execution, &DurableReading)
                }
                "WAITING_EXTERNAL" => ev == event::CALLBACK_STARTED && name != names::LATE,
                "RUNNING" => waits(names::WAIT_LEASE),
                "WAIT_RETRY" | "QUEUED" => waits(names::WAIT_DUE),
                _ => ev == event::EXECUTION_FAILED,
            };
        if !ok {
            out.push(v(
                "routes-follow-tpf-outcome",
                format!("TPF answered {status} but {execution} went on to {ev} {name:?}"),
                excerpt(trace, i),
            ));
        }
    }
    out
}

/// A driver that ends in success ends so only while TPF's record is SUCCEEDED, one that fails
/// with TPF's failure only while TPF's record failed, and one that stops on an unknown remote
/// outcome only while TPF's record says so.
fn ends_as_tpf_ends(run: &DurableRun) -> Vec<Violation> {
    let trace = &run.world.trace;
    let mut out = Vec::new();
    for exec in executions(trace) {
        let timeline = record_timeline(trace, &exec);
        for (i, e) in trace.entries.iter().enumerate() {
            let Entry::Driver {
                at_ms,
                execution,
                sweeper: false,
                event,
                detail,
                ..
            } = e
            else {
                continue;
            };
            if !belongs(execution, &exec) {
                continue;
            }
            let tpf = timeline
                .iter()
                .rev()
                .find(|(t, _, _)| t <= at_ms)
                .map(|(_, s, _)| s.as_str())
                .unwrap_or("?");
            let wrong = match *event {
                event::EXECUTION_SUCCEEDED => {
                    let succeeded = driver_executions(&run.world, &exec).iter().any(|x| {
                        &x.name == execution
                            && x.result
                                .as_ref()
                                .and_then(|r| r.get("end"))
                                .and_then(|v| v.as_str())
                                == Some("succeeded")
                    });
                    succeeded && tpf != "SUCCEEDED"
                }
                event::EXECUTION_FAILED => {
                    (detail.as_deref() == Some(fail_error::EXECUTION_FAILED)
                        && !matches!(tpf, "FAILED" | "DLQ"))
                        || (detail.as_deref() == Some(fail_error::REMOTE_OUTCOME_UNKNOWN)
                            && tpf != "REMOTE_OUTCOME_UNKNOWN")
                        // Its replay took another path than its first run: it no longer follows
                        // the answers TPF gave, whatever TPF's record says.
                        || detail.as_deref() == Some(error::NON_DETERMINISTIC)
                }
                _ => false,
            };
            if wrong {
                out.push(v(
                    "driver-ends-as-tpf-ends",
                    format!("{execution} ended with {event} while TPF's record is {tpf}"),
                    excerpt(trace, i),
                ));
            }
        }
    }
    out
}

fn calls_carry_pinned_identity(run: &DurableRun) -> Vec<Violation> {
    let w = &run.world;
    let mut out = common::calls_carry_pinned_identity(&w.trace, &w.host, w.now_ms());
    for exec in executions(&w.trace) {
        let Ok(record) = w.host.coordinator().status(TENANT, &exec, w.now_ms()) else {
            continue;
        };
        let pinned = w
            .releases
            .iter()
            .find(|r| r.identity.release_version == record.release_version)
            .map(|r| r.function_arn.as_str());
        for x in driver_executions(w, &exec) {
            if pinned != Some(x.function_arn.as_str()) {
                out.push(v(
                    "calls-carry-pinned-identity",
                    format!("driver {} of {exec} runs on function version {}, not the one of its pinned release {}", x.name, x.function_arn, record.release_version),
                    String::new(),
                ));
            }
        }
    }
    out
}

/// The bounded-history invariant on this backend: every generation checkpoints at most the
/// spec's operation budget, under the service's operation cap, writes less state than the
/// service's written-state cap, and none fails at either cap.
fn bounded_operations(run: &DurableRun) -> Vec<Violation> {
    let budget = u64::from(run.subject.program.spec.operation_budget);
    let mut out = Vec::new();
    for x in run.world.engine.executions() {
        let capped = x.status == ExecutionStatus::Failed
            && x.error
                .as_ref()
                .is_some_and(|e| e.error == error::OPERATION_LIMIT);
        let state_capped = x.status == ExecutionStatus::Failed
            && x.error
                .as_ref()
                .is_some_and(|e| e.error == error::WRITTEN_STATE_LIMIT);
        if x.state_bytes_written > WRITTEN_STATE_CAP || state_capped {
            out.push(v(
                "history-within-proven-bound",
                format!(
                    "driver {} wrote {} bytes of state (service cap {WRITTEN_STATE_CAP}){}",
                    x.name,
                    x.state_bytes_written,
                    if state_capped {
                        ", and failed at the cap"
                    } else {
                        ""
                    }
                ),
                String::new(),
            ));
        }
        if x.operations_billed > budget || x.operations_billed >= OPERATION_CAP || capped {
            out.push(v(
                "history-within-proven-bound",
                format!(
                    "driver {} checkpointed {} operations (operation budget {budget}, service cap {OPERATION_CAP}){}",
                    x.name,
                    x.operations_billed,
                    if capped { ", and failed at the cap" } else { "" }
                ),
                String::new(),
            ));
        }
    }
    out
}

fn within_budget(run: &DurableRun) -> Vec<Violation> {
    let (b, m) = (&run.budget, &run.metrics);
    let mut out = Vec::new();
    if run.budget_spent {
        out.push(v(
            "run-within-budget",
            format!(
                "the run reached its budget of {} history events or {} invocations at {} of virtual time and was stopped there: the driver does more work than this scenario can justify (a loop that does not wait, or a hand-over that starts the next generation at once)",
                b.events,
                b.invocations,
                crate::harness::trace::clock(run.world.now_ms() - run.world.trace.start_ms)
            ),
            String::new(),
        ));
    }
    out.extend(common::calls_within_budget(m.action_calls, b.action_calls));
    if m.operations > b.operations {
        out.push(v(
            "run-within-budget",
            format!(
                "{} operations, over the scenario's budget of {}",
                m.operations, b.operations
            ),
            String::new(),
        ));
    }
    out
}

fn generations_paced(run: &DurableRun) -> Vec<Violation> {
    common::generations_paced(&run.world.trace, &|exec| {
        driver_executions(&run.world, exec)
            .iter()
            .map(|x| x.start_ms)
            .collect()
    })
}

/// Operations outside the loop: the registration step, the wait before a hand-over and the
/// hand-over step (the compiler's operation budget counts the same).
const FIXED_OPERATIONS: u64 = 3;

/// The spec's static checks, before any scenario runs: the definition-within-limits invariant
/// on this backend. A durable driver's loop is code, so what can be wrong is the spec it reads:
/// the identity it pins, a budget its worst generation does not fit, timings that poll.
pub fn static_violations(subject: &Subject) -> Vec<Violation> {
    let s: &DurableSpec = &subject.program.spec;
    let plan = &subject.plan;
    let mut out = Vec::new();
    let mut bad = |detail: String| out.push(v("definition-within-limits", detail, String::new()));
    if s.format != spec::FORMAT {
        bad(format!(
            "DURABLE_SPEC_FORMAT: the spec's format is {}, the driver reads format {}",
            s.format,
            spec::FORMAT
        ));
    }
    let id = &s.identity;
    if id.pipeline_id.is_empty()
        || id.contract_version.is_empty()
        || id.release_version.is_empty()
        || id != &plan.identity
    {
        bad(format!(
            "DURABLE_SPEC_IDENTITY: the spec pins {id:?}, the release is {:?}",
            plan.identity
        ));
    }
    if u64::from(s.operation_budget) >= OPERATION_CAP {
        bad(format!("DURABLE_SPEC_BUDGET: an operation budget of {} is not below the service's cap of {OPERATION_CAP}", s.operation_budget));
    }
    let state = tpf_sfn_compiler::durable::written_state_bound(s.operation_budget);
    if state > WRITTEN_STATE_CAP {
        bad(format!("DURABLE_SPEC_BUDGET: an operation budget of {} can write {state} bytes of state, over the service's cap of {WRITTEN_STATE_CAP}", s.operation_budget));
    }
    let worst = tpf_sfn_compiler::durable::iteration_cost(&s.transport_retry)
        .saturating_mul(s.max_iterations)
        .saturating_add(FIXED_OPERATIONS);
    if s.max_iterations == 0 || worst > u64::from(s.operation_budget) {
        bad(format!(
            "DURABLE_SPEC_BUDGET: {} calls per generation can checkpoint {worst} operations, over the operation budget of {}: the generation would not hand over in time",
            s.max_iterations, s.operation_budget
        ));
    }
    let w = &s.wakeup;
    if w.lease_wait_seconds == 0
        || w.recheck_seconds == 0
        || w.late_recheck_seconds < 60
        || w.late_recheck_max_seconds < w.late_recheck_seconds
    {
        bad(format!(
            "DURABLE_SPEC_PACING: lease wait {} s, re-check {} s, late back-off {}..{} s: every re-ask must wait (a second at least, a minute past a deadline)",
            w.lease_wait_seconds, w.recheck_seconds, w.late_recheck_seconds, w.late_recheck_max_seconds
        ));
    }
    out
}
