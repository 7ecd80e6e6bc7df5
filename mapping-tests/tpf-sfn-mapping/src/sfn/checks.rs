//! This backend's reading of every named check. Static ones read the deployed definition;
//! dynamic ones read the trace, the TPF model's commit log and the interpreter's executions.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tpf_sfn_compiler::sfn::asl::{State, StateMachine};
use tpf_sfn_compiler::sfn::iam::all_states;
use tpf_sfn_compiler::sfn::validate::{self, Profile, ValidateOptions};

use super::pacing;
use super::run::{driver_executions, Run};
use super::Subject;
use crate::harness::trace::Entry;
use crate::invariants::common::{self, belongs, record_timeline, Generation, Reading};
use crate::invariants::{self, excerpt, v, CheckId, Violation};
use crate::scenario::run::TENANT;
use asl_interp::engine::ExecutionStatus;
use tpf_wire::action::driver_error;

/// Evaluates every check of the table over a run.
pub fn evaluate(run: &Run) -> Vec<Violation> {
    invariants::evaluate(run, reading)
}

/// How this backend answers each check of the table.
fn reading(id: CheckId, run: &Run) -> Vec<Violation> {
    match id {
        CheckId::TransportOnlyRetries => transport_only_retries(run),
        CheckId::WritesOnlyTheWakeupTable => writes_only_wakeup_table(run),
        CheckId::RoutesFollowTpfOutcome => routes_follow_outcome(run),
        CheckId::RespectsTpfDueTime => respects_due_time(run),
        CheckId::DriverEndsAsTpfEnds => ends_as_tpf_ends(run),
        CheckId::SingleLiveGeneration => single_live_generation(run),
        CheckId::ParksWithoutPolling => parks_without_polling(run),
        CheckId::ResumeGoesThroughTpf => resume_goes_through_tpf(run),
        CheckId::OneResumePerPark => one_resume_per_park(run),
        CheckId::CallsCarryPinnedIdentity => calls_carry_pinned_identity(run),
        CheckId::RedriveContinuesSameExecution => redrive_same_execution(run),
        CheckId::IdempotencyKeysAndSingleCommits => idempotency(run),
        CheckId::HistoryWithinProvenBound => bounded_history(run),
        CheckId::DefinitionWithinLimits => within_limits(run),
        CheckId::RunWithinBudget => pacing::within_budget(run),
        CheckId::CallsPacedByTpf => pacing::calls_paced(run),
        CheckId::GenerationsPaced => pacing::generations_paced(run),
        CheckId::LeaseWaitBounded => common::lease_wait_bounded(run),
        CheckId::RecheckWaitBounded => common::recheck_wait_bounded(run, &SfnReading(driver(run))),
    }
}

pub(super) fn driver<'s>(run: &Run<'s>) -> &'s StateMachine {
    &run.subject.program.driver
}

/// A top-level state by name (state names are unique keys of `States`).
pub(super) fn state<'a>(m: &'a StateMachine, name: &str) -> Option<&'a State> {
    m.states.get(name)
}

pub(super) fn is_await(s: &State) -> bool {
    matches!(s, State::Task(t) if t.resource.ends_with(".waitForTaskToken") && t.resource.contains("dynamodb"))
}

fn is_handover(s: &State) -> bool {
    matches!(s, State::Task(t) if t.resource.ends_with("startExecution"))
}

/// Succeed states that end a generation by handing over (targets of a startExecution Task).
fn handover_targets(m: &StateMachine) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in m.states.values() {
        if is_handover(s) {
            for (_, n) in s.successors() {
                out.insert(n.to_string());
            }
        }
    }
    out
}

/// The TPF executions of the run (the first submission and any later ones).
pub(super) fn executions(run: &Run) -> Vec<String> {
    common::executions(&run.world.trace)
}

/// How Step Functions driver events read: a state entered is a move, an await Task's end is a
/// park's end.
pub(super) struct SfnReading<'a>(pub(super) &'a StateMachine);

impl SfnReading<'_> {
    fn await_state<'e>(&self, e: &'e Entry, events: &[&str]) -> Option<&'e str> {
        match e {
            Entry::Driver {
                event,
                state: Some(st),
                ..
            } if events.contains(event) && state(self.0, st).is_some_and(is_await) => Some(st),
            _ => None,
        }
    }
}

impl Reading for SfnReading<'_> {
    fn moved(&self, e: &Entry) -> bool {
        matches!(e, Entry::Driver { event, .. } if event.ends_with("StateEntered"))
    }

    fn park_timed_out(&self, e: &Entry) -> bool {
        matches!(e, Entry::Driver { event, .. } if *event == "TaskTimedOut")
    }

    fn unregistered<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        self.await_state(e, &["TaskFailed"])
    }

    fn left_park<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        self.await_state(e, &["TaskSucceeded", "TaskTimedOut", "TaskFailed"])
    }

    fn woken(&self, e: &Entry) -> bool {
        self.await_state(e, &["TaskSucceeded"]).is_some()
    }

    fn decides<'e>(&self, e: &'e Entry) -> Option<&'e str> {
        match e {
            Entry::Driver {
                event,
                state: Some(st),
                ..
            } if event.ends_with("StateEntered") => state(self.0, st)
                .filter(|s| matches!(s, State::Succeed(_) | State::Fail(_)) || is_await(s))
                .map(|_| st.as_str()),
            _ => None,
        }
    }
}

/// The driver executions of `exec`, as the generation checks read them.
fn generations(run: &Run, exec: &str) -> Vec<Generation> {
    let w = &run.world;
    let end = w.now_ms();
    driver_executions(w, exec)
        .into_iter()
        .filter_map(|arn| {
            let d = w.engine.describe_execution(&arn).ok()?;
            let handed_over_ms = w
                .engine
                .history(&arn)
                .iter()
                .filter(|ev| {
                    ev.event_type == "TaskStateEntered"
                        && ev
                            .state_name
                            .as_deref()
                            .and_then(|n| state(driver(run), n))
                            .is_some_and(is_handover)
                })
                .map(|ev| ev.timestamp_ms)
                .min();
            Some(Generation {
                name: arn.rsplit(':').next().unwrap_or("").to_string(),
                start_ms: d.start_ms,
                end_ms: d.stop_ms.unwrap_or(end),
                home: machine_of(&arn),
                handed_over_ms,
            })
        })
        .collect()
}

fn respects_due_time(run: &Run) -> Vec<Violation> {
    common::respects_due_time(&run.world.trace)
}

fn single_live_generation(run: &Run) -> Vec<Violation> {
    common::single_live_generation(&run.world.trace, &|exec| generations(run, exec))
}

fn parks_without_polling(run: &Run) -> Vec<Violation> {
    common::parks_without_polling(
        &run.world.trace,
        run.world.now_ms(),
        &SfnReading(driver(run)),
    )
}

fn resume_goes_through_tpf(run: &Run) -> Vec<Violation> {
    common::resume_goes_through_tpf(&run.world.trace, &SfnReading(driver(run)))
}

fn one_resume_per_park(run: &Run) -> Vec<Violation> {
    common::one_resume_per_park(&run.world.trace, &SfnReading(driver(run)))
}

fn redrive_same_execution(run: &Run) -> Vec<Violation> {
    common::redrive_same_execution(&run.world.trace, &|exec| generations(run, exec))
}

fn idempotency(run: &Run) -> Vec<Violation> {
    common::idempotency(&run.world.trace, &run.world.host)
}

/// The calls' identity (shared), and every driver on the machine of the pinned release.
fn calls_carry_pinned_identity(run: &Run) -> Vec<Violation> {
    let w = &run.world;
    let mut out = common::calls_carry_pinned_identity(&w.trace, &w.host, w.now_ms());
    for exec in executions(run) {
        let Ok(record) = w.host.coordinator().status(TENANT, &exec, w.now_ms()) else {
            continue;
        };
        let machine = w
            .releases
            .iter()
            .find(|r| r.identity.release_version == record.release_version)
            .map(|r| r.driver_arn.clone());
        for arn in driver_executions(w, &exec) {
            let on_pinned = machine.as_ref().is_some_and(|m| {
                let name = m.rsplit(':').next().unwrap_or("");
                arn.contains(&format!(":execution:{name}:"))
            });
            if !on_pinned {
                out.push(v(
                    "calls-carry-pinned-identity",
                    format!(
                        "driver {} of {exec} does not run on the machine of its pinned release {}",
                        arn.rsplit(':').next().unwrap_or(""),
                        record.release_version
                    ),
                    String::new(),
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------

/// Error names that are TPF decisions, or that could hide one: never retried by Step Functions.
fn business_error(e: &str) -> bool {
    matches!(e, "States.ALL" | "States.TaskFailed" | "States.Runtime")
        || (e.starts_with("TPF.") && e != tpf_wire::action::task_error::TRANSPORT)
        // 4xx answers are TPF's verdicts, except 429, which is throttling of the transport.
        || (e.starts_with("States.Http.StatusCode.4") && e != "States.Http.StatusCode.429")
}

fn transport_only_retries(run: &Run) -> Vec<Violation> {
    let mut out = Vec::new();
    for s in all_states(driver(run)) {
        for r in s.retriers() {
            for e in &r.error_equals {
                if business_error(e) {
                    out.push(v(
                        "transport-only-retries",
                        format!("a Retry covers {e}: Step Functions would retry a TPF decision (TPF owns retries and backoff)"),
                        String::new(),
                    ));
                }
            }
        }
    }
    out
}

fn writes_only_wakeup_table(run: &Run) -> Vec<Violation> {
    let table = &run.subject.plan.wakeup.table_name;
    let mut out = Vec::new();
    for s in all_states(driver(run)) {
        let State::Task(t) = s else { continue };
        if t.resource.contains("dynamodb") {
            let name = t
                .parameters
                .as_ref()
                .and_then(|p| p.get("TableName"))
                .and_then(|n| n.as_str())
                .unwrap_or("");
            if name != table {
                out.push(v(
                    "writes-only-the-wakeup-table",
                    format!("a DynamoDB Task targets table {name:?}; the driver may only touch the adapter's wakeup table {table:?}, never TPF's records"),
                    String::new(),
                ));
            }
        }
    }
    out
}

fn routes_follow_outcome(run: &Run) -> Vec<Violation> {
    let trace = &run.world.trace;
    let m = driver(run);
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
        if action != "process-work-item" || fault.as_deref() == Some("lostreply") {
            continue;
        }
        // The first state this execution enters after the answer that does more than route or
        // set data (Choice and Pass states).
        let next = trace.entries[i + 1..].iter().find_map(|x| match x {
            Entry::Driver {
                execution: ex,
                event,
                state: Some(st),
                ..
            } if ex == execution && event.ends_with("StateEntered") => state(m, st)
                .filter(|s| !matches!(s, State::Choice(_) | State::Pass(_)))
                .map(|s| (st.clone(), s)),
            _ => None,
        });
        let Some((name, next)) = next else { continue };
        let ok = is_handover(next)
            || match status.as_str() {
                "SUCCEEDED" => matches!(next, State::Succeed(_)),
                "FAILED" | "DLQ" => matches!(next, State::Fail(_)),
                // Unconfirmed: stop with the driver's own error, never re-ask or retry.
                "REMOTE_OUTCOME_UNKNOWN" => fails_with(next, driver_error::REMOTE_OUTCOME_UNKNOWN),
                // Parked, but TPF reports the wake-up due now (its deadline passed without TPF
                // applying it): park again, woken by the bridge or re-asking after a back-off
                // of at least a minute, never in a tight loop.
                "WAITING_EXTERNAL" if wake_in_s.is_some_and(|s| s <= 1) => {
                    is_await(next) && common::backs_off(trace, i, execution, &SfnReading(m))
                }
                "WAITING_EXTERNAL" => is_await(next),
                "RUNNING" => matches!(next, State::Wait(_)),
                "WAIT_RETRY" | "QUEUED" => {
                    matches!(next, State::Wait(w) if w.timestamp_path.is_some())
                }
                _ => matches!(next, State::Fail(_)),
            };
        if !ok {
            out.push(v(
                "routes-follow-tpf-outcome",
                format!(
                    "TPF answered {status} but {execution} went on to {name:?} ({})",
                    next.type_name()
                ),
                excerpt(trace, i),
            ));
        }
    }
    out
}

/// A Fail state with this error.
fn fails_with(s: &State, error: &str) -> bool {
    matches!(s, State::Fail(f) if f.error.as_deref() == Some(error))
}

fn ends_as_tpf_ends(run: &Run) -> Vec<Violation> {
    let trace = &run.world.trace;
    let handover = handover_targets(driver(run));
    let mut out = Vec::new();
    for exec in executions(run) {
        let timeline = record_timeline(trace, &exec);
        for (i, e) in trace.entries.iter().enumerate() {
            let Entry::Driver {
                at_ms,
                execution,
                sweeper: false,
                event,
                state: Some(st),
                ..
            } = e
            else {
                continue;
            };
            if !belongs(execution, &exec) || !event.ends_with("StateEntered") {
                continue;
            }
            let Some(s) = state(driver(run), st) else {
                continue;
            };
            let tpf = timeline
                .iter()
                .rev()
                .find(|(t, _, _)| t <= at_ms)
                .map(|(_, s, _)| s.as_str())
                .unwrap_or("?");
            let wrong = match s {
                State::Succeed(_) if !handover.contains(st) => {
                    (tpf != "SUCCEEDED").then_some("success")
                }
                _ if fails_with(s, driver_error::REMOTE_OUTCOME_UNKNOWN) => {
                    (tpf != "REMOTE_OUTCOME_UNKNOWN").then_some("remote outcome unknown")
                }
                _ => None,
            };
            if let Some(end) = wrong {
                out.push(v(
                    "driver-ends-as-tpf-ends",
                    format!("{execution} reached {st:?} ({end}) while TPF's record is {tpf}"),
                    excerpt(trace, i),
                ));
            }
        }
    }
    out
}

fn machine_of(arn: &str) -> String {
    // arn:aws:states:region:account:execution:<machine>:<name>
    arn.split(':').nth(6).unwrap_or("").to_string()
}

// ---------------------------------------------------------------------------------------------
// Bounded history and limits checked at compile time.

fn subject_options(subject: &Subject) -> ValidateOptions {
    ValidateOptions {
        event_limit: u64::from(subject.program.sfn.budget.event_budget),
        map_item_bounds: BTreeMap::new(),
        profile: Profile::TpfDriver,
    }
}

/// What the static checks conclude about a driver: its proven history bound and the
/// validator's errors.
#[derive(Clone)]
struct StaticVerdict {
    bound: Option<u64>,
    errors: Vec<Violation>,
}

/// Definitions checked on this thread, most recently used first. A matrix runs every scenario
/// on the same driver, and a verdict depends on nothing but the driver and its event budget,
/// so it is computed once instead of once per scenario. Each is kept as the interpreter's shared
/// copy: while the subject's machines are pinned (`proof::pin`) that copy is the same allocation
/// on every call, so a hit costs a pointer comparison instead of comparing the definitions.
const VERDICT_CACHE: usize = 4;

thread_local! {
    static VERDICTS: RefCell<Vec<(Arc<StateMachine>, u32, StaticVerdict)>> = const { RefCell::new(Vec::new()) };
}

fn static_verdict(subject: &Subject) -> StaticVerdict {
    let budget = subject.program.sfn.budget.event_budget;
    let m = &subject.program.driver;
    // A definition the interpreter cannot compile has no shared copy; it is compared in full.
    let shared = asl_interp::shared(m).ok().map(|(_, d)| d);
    VERDICTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let same = |d: &Arc<StateMachine>| match &shared {
            Some(s) if Arc::ptr_eq(d, s) => true,
            _ => **d == *m,
        };
        if let Some(i) = cache.iter().position(|(d, b, _)| *b == budget && same(d)) {
            let hit = cache.remove(i);
            let verdict = hit.2.clone();
            cache.insert(0, hit);
            return verdict;
        }
        let opts = subject_options(subject);
        let verdict = StaticVerdict {
            bound: validate::analyze_history(m, &opts).max_events,
            errors: validate::validate("driver", m, &opts)
                .diagnostics
                .into_iter()
                .filter(|d| d.is_error())
                .map(|d| {
                    v(
                        "definition-within-limits",
                        format!("{}: {}", d.code, d.message),
                        String::new(),
                    )
                })
                .collect(),
        };
        let key = shared.unwrap_or_else(|| Arc::new(m.clone()));
        cache.insert(0, (key, budget, verdict.clone()));
        cache.truncate(VERDICT_CACHE);
        verdict
    })
}

fn bounded_history(run: &Run) -> Vec<Violation> {
    let w = &run.world;
    let bound = run.verdict.history_bound;
    let mut out = Vec::new();
    for exec in executions(run) {
        for arn in driver_executions(w, &exec) {
            let events = w.engine.history(&arn).len() as u64;
            let failed_runtime = w.engine.describe_execution(&arn).ok().is_some_and(|d| {
                d.status == ExecutionStatus::Failed && d.error.as_deref() == Some("States.Runtime")
            });
            let over = bound.is_none_or(|b| events > b) || events >= 25_000 || failed_runtime;
            if over {
                out.push(v(
                    "history-within-proven-bound",
                    format!(
                        "driver {} emitted {events} history events (proven bound {}){}",
                        arn.rsplit(':').next().unwrap_or(""),
                        bound.map_or("none: unbounded loop".to_string(), |b| b.to_string()),
                        if failed_runtime {
                            ", and failed with States.Runtime"
                        } else {
                            ""
                        }
                    ),
                    String::new(),
                ));
            }
        }
    }
    out
}

fn within_limits(run: &Run) -> Vec<Violation> {
    run.verdict.static_violations.clone()
}

/// The validator's verdict on a subject's driver, taken once per matrix: every scenario runs
/// the same driver, so re-validating it per scenario only cost time.
#[derive(Debug, Clone, PartialEq)]
pub struct Proven {
    pub static_violations: Vec<Violation>,
    /// The most history events one generation can emit, if the validator can bound it.
    pub history_bound: Option<u64>,
}

impl Proven {
    pub fn of(subject: &Subject) -> Proven {
        let verdict = static_verdict(subject);
        Proven {
            static_violations: verdict.errors,
            history_bound: verdict.bound,
        }
    }
}

/// The validator's errors on the subject's driver, as `definition-within-limits` violations.
pub fn static_violations(subject: &Subject) -> Vec<Violation> {
    static_verdict(subject).errors
}
