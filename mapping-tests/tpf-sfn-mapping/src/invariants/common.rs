//! The checks every backend shares: they read the trace (driver events, action calls, TPF's
//! record changes) and TPF itself, and learn what a driver event means from a [`Reading`] of the
//! backend that wrote it. A backend's checks (`crate::sfn::checks`) call these
//! with their own readings.

use std::collections::{BTreeMap, BTreeSet};

use super::{excerpt, v, Violation};
use crate::harness::trace::{clock, Entry, Trace};
use crate::scenario::budget::{GENERATIONS_PER_WINDOW, GENERATION_WINDOW_MS};
use crate::scenario::run::{Run, Runner, TENANT};
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;

/// What a backend's driver events mean. Each answers for one trace entry.
pub(crate) trait Reading {
    /// The driver did something: entered a state, started an operation.
    fn moved(&self, e: &Entry) -> bool;
    /// A park ended by its own timeout: the await's deadline wake-up.
    fn park_timed_out(&self, e: &Entry) -> bool;
    /// A park whose wakeup could not be registered, by the park's name: nobody can wake it.
    fn unregistered<'e>(&self, e: &'e Entry) -> Option<&'e str>;
    /// A park ended, however (woken, timed out, unregistered), by the park's name.
    fn left_park<'e>(&self, e: &'e Entry) -> Option<&'e str>;
    /// A park was woken.
    fn woken(&self, e: &Entry) -> bool;
    /// A decision only TPF's answer may make (succeed, fail, park), by what it is called.
    fn decides<'e>(&self, e: &'e Entry) -> Option<&'e str>;
}

/// One driver generation, as the generation checks need it.
#[derive(Debug, Clone)]
pub(crate) struct Generation {
    pub name: String,
    pub start_ms: i64,
    /// When it ended, or the end of the run.
    pub end_ms: i64,
    /// The machine or function version it runs on.
    pub home: String,
    /// When it started handing over to its successor, if it did.
    pub handed_over_ms: Option<i64>,
}

pub(crate) fn belongs(execution: &str, exec: &str) -> bool {
    execution == exec || execution.starts_with(&format!("{exec}-"))
}

/// The TPF executions of the run (the first submission and any later ones).
pub(crate) fn executions(trace: &Trace) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in &trace.entries {
        if let Entry::Record { execution_id, .. } = e {
            if !out.contains(execution_id) {
                out.push(execution_id.clone());
            }
        }
    }
    out
}

/// (time, status, cause) of each committed record change of one execution.
pub(crate) fn record_timeline(trace: &Trace, exec: &str) -> Vec<(i64, String, String)> {
    trace
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Record {
                at_ms,
                execution_id,
                status,
                cause,
                ..
            } if execution_id == exec => Some((*at_ms, status.clone(), cause.clone())),
            _ => None,
        })
        .collect()
}

fn driver_of(e: &Entry) -> Option<(&str, i64)> {
    match e {
        Entry::Driver {
            execution,
            sweeper: false,
            at_ms,
            ..
        } => Some((execution.as_str(), *at_ms)),
        _ => None,
    }
}

pub(crate) fn respects_due_time(trace: &Trace) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        let mut due: Option<(i64, Option<String>)> = None;
        for (i, e) in trace.entries.iter().enumerate() {
            let Entry::Call {
                at_ms,
                execution,
                action,
                key,
                status,
                next_due_ms,
                ..
            } = e
            else {
                continue;
            };
            if action != "process-work-item" || !belongs(execution, &exec) {
                continue;
            }
            if let Some((t, k)) = &due {
                // A retry of the same call (same key) is transport, not a new decision.
                if *at_ms < *t && k != key {
                    out.push(v(
                        "respects-tpf-due-time",
                        format!("{execution} called TPF at {} although TPF said the execution is not due before {}", clock(at_ms - trace.start_ms), clock(t - trace.start_ms)),
                        excerpt(trace, i),
                    ));
                }
            }
            if matches!(status.as_deref(), Some("WAIT_RETRY") | Some("QUEUED")) {
                due = next_due_ms.map(|t| (t, key.clone()));
            } else if status.is_some() {
                due = None;
            }
        }
    }
    out
}

pub(crate) fn single_live_generation(
    trace: &Trace,
    gens_of: &dyn Fn(&str) -> Vec<Generation>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        let gens = gens_of(&exec);
        for (i, a) in gens.iter().enumerate() {
            for b in gens.iter().skip(i + 1) {
                if b.start_ms >= a.end_ms {
                    continue;
                }
                // Overlap is fine only during a hand-over: A already started B and only ends.
                if a.handed_over_ms.is_none_or(|t| t > b.start_ms) {
                    out.push(v(
                        "single-live-generation",
                        format!(
                            "driver generations {} and {} of TPF execution {exec} were live at the same time",
                            a.name, b.name
                        ),
                        String::new(),
                    ));
                }
            }
        }
    }
    out
}

pub(crate) fn parks_without_polling(trace: &Trace, end: i64, r: &dyn Reading) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        // Instants at which a parked driver timed out: the deadline wake-up, which is allowed.
        let timeouts: BTreeSet<i64> = trace
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::Driver { execution, .. } if belongs(execution, &exec)))
            .filter(|e| r.park_timed_out(e))
            .map(Entry::at_ms)
            .collect();
        let timeline = record_timeline(trace, &exec);
        // From the moment a driver learns TPF parked the execution until TPF's record leaves
        // WAITING_EXTERNAL, the driver must not move.
        for e in &trace.entries {
            let Entry::Call {
                at_ms: from,
                execution,
                action,
                status: Some(status),
                ..
            } = e
            else {
                continue;
            };
            if action != "process-work-item"
                || status != "WAITING_EXTERNAL"
                || !belongs(execution, &exec)
            {
                continue;
            }
            let to = timeline
                .iter()
                .find(|(t, s, _)| t >= from && s != "WAITING_EXTERNAL")
                .map_or(end, |(t, _, _)| *t);
            // A wakeup that could not be registered leaves the driver without one: its
            // re-check is the designed fallback (`recheck-wait-bounded` bounds its pause).
            let mut unregistered = false;
            let hit = trace.entries.iter().position(|x| {
                let Some((ex, at)) = driver_of(x) else {
                    return false;
                };
                if ex != execution || at < *from || at >= to {
                    return false;
                }
                if r.unregistered(x).is_some() {
                    unregistered = true;
                    return false;
                }
                at > *from && r.moved(x) && !timeouts.contains(&at) && !unregistered
            });
            if let Some(i) = hit {
                out.push(v(
                    "parks-without-polling",
                    format!(
                        "{execution} made state transitions while TPF's record was WAITING_EXTERNAL ({} to {}): a parked execution must cost nothing until woken",
                        clock(from - trace.start_ms),
                        clock(to - trace.start_ms)
                    ),
                    excerpt(trace, i),
                ));
                break;
            }
        }
    }
    out
}

pub(crate) fn resume_goes_through_tpf(trace: &Trace, r: &dyn Reading) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, e) in trace.entries.iter().enumerate() {
        let (Some((execution, _)), Some(park)) = (driver_of(e), r.left_park(e)) else {
            continue;
        };
        // After leaving a park, the next decision must come from a TPF call.
        for x in &trace.entries[i + 1..] {
            match x {
                Entry::Call {
                    execution: ex,
                    action,
                    ..
                } if ex == execution && action == "process-work-item" => break,
                _ => {}
            }
            if driver_of(x).is_some_and(|(ex, _)| ex == execution) {
                if let Some(next) = r.decides(x) {
                    out.push(v(
                        "resume-goes-through-tpf",
                        format!("{execution} left await {park:?} and entered {next:?} without asking TPF: the token is only a wakeup handle"),
                        excerpt(trace, i),
                    ));
                    break;
                }
            }
        }
    }
    out
}

pub(crate) fn one_resume_per_park(trace: &Trace, r: &dyn Reading) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        let parks = record_timeline(trace, &exec)
            .iter()
            .filter(|(_, s, _)| s == "WAITING_EXTERNAL")
            .count();
        let resumes = trace
            .entries
            .iter()
            .filter(|e| driver_of(e).is_some_and(|(ex, _)| belongs(ex, &exec)) && r.woken(e))
            .count();
        if resumes > parks {
            out.push(v(
                "one-resume-per-park",
                format!("TPF parked execution {exec} {parks} time(s) but its drivers were woken {resumes} time(s)"),
                String::new(),
            ));
        }
    }
    out
}

/// Every process-work-item call carries the identity the execution is pinned to.
pub(crate) fn calls_carry_pinned_identity(
    trace: &Trace,
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        let Ok(record) = host.coordinator().status(TENANT, &exec, now_ms) else {
            continue;
        };
        let pinned = [
            record.pipeline_id.clone(),
            record.contract_version.clone(),
            record.release_version.clone(),
        ];
        for (i, e) in trace.entries.iter().enumerate() {
            let Entry::Call {
                execution,
                action,
                identity: Some(id),
                ..
            } = e
            else {
                continue;
            };
            if action == "process-work-item" && belongs(execution, &exec) && id != &pinned {
                out.push(v(
                    "calls-carry-pinned-identity",
                    format!("{execution} called TPF with identity {id:?}; the execution is pinned to {pinned:?}"),
                    excerpt(trace, i),
                ));
            }
        }
    }
    out
}

/// A TPF re-drive starts the lineage `<exec>-r<version>` after it, on the execution's own
/// release; TPF never creates an execution twice.
pub(crate) fn redrive_same_execution(
    trace: &Trace,
    gens_of: &dyn Fn(&str) -> Vec<Generation>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        let gens = gens_of(&exec);
        for (i, e) in trace.entries.iter().enumerate() {
            let Entry::Record {
                at_ms,
                execution_id,
                version,
                cause,
                ..
            } = e
            else {
                continue;
            };
            if execution_id != &exec || cause != "redrive" {
                continue;
            }
            let expected = tpf_sfn_wakeup::bridge::redrive_lineage(&exec, *version);
            let first_home = gens.first().map(|g| g.home.as_str());
            match gens.iter().find(|g| g.name == expected) {
                None => out.push(v(
                    "redrive-continues-same-execution",
                    format!("TPF re-drove {exec} at version {version} but no driver generation {expected} started"),
                    excerpt(trace, i),
                )),
                Some(g) => {
                    if g.start_ms < *at_ms || first_home != Some(g.home.as_str()) {
                        out.push(v(
                            "redrive-continues-same-execution",
                            format!("re-drive generation {expected} did not start after the re-drive on the execution's own release"),
                            excerpt(trace, i),
                        ));
                    }
                }
            }
        }
        let creates = record_timeline(trace, &exec)
            .iter()
            .filter(|(_, _, c)| c == "create")
            .count();
        if creates > 1 {
            out.push(v(
                "redrive-continues-same-execution",
                format!("TPF execution {exec} was created {creates} times"),
                String::new(),
            ));
        }
    }
    out
}

pub(crate) fn idempotency(trace: &Trace, host: &ActionHost<InMemoryStore>) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut owners: BTreeMap<String, String> = BTreeMap::new();
    for (i, e) in trace.entries.iter().enumerate() {
        let Entry::Call {
            execution,
            action,
            key,
            ..
        } = e
        else {
            continue;
        };
        if action != "process-work-item" {
            continue;
        }
        let Some(key) = key else {
            out.push(v(
                "idempotency-keys-and-single-commits",
                format!("{execution} called process-work-item without an idempotency key"),
                excerpt(trace, i),
            ));
            continue;
        };
        let well_formed = key
            .rsplit_once(":i")
            .and_then(|(rest, it)| it.parse::<u64>().ok().and(rest.rsplit_once(":g")))
            .is_some_and(|(_, g)| g.parse::<u64>().is_ok());
        if !well_formed {
            out.push(v(
                "idempotency-keys-and-single-commits",
                format!("idempotency key {key:?} is not <lineage>:g<generation>:i<iteration>"),
                excerpt(trace, i),
            ));
        }
        if let Some(owner) = owners.insert(key.clone(), execution.clone()) {
            if &owner != execution {
                out.push(v(
                    "idempotency-keys-and-single-commits",
                    format!("idempotency key {key:?} was sent by two driver executions ({owner}, {execution}): different calls must have different keys"),
                    excerpt(trace, i),
                ));
            }
        }
    }
    if let Err(e) = host.coordinator().log().check_all() {
        out.push(v(
            "idempotency-keys-and-single-commits",
            e.to_string(),
            String::new(),
        ));
    }
    out
}

/// After the late answer at entry `i`, the driver's next call comes at least a minute later,
/// unless the bridge woke it (its park ended woken) first.
pub(crate) fn backs_off(trace: &Trace, i: usize, execution: &str, r: &dyn Reading) -> bool {
    let Some(from) = trace.entries.get(i).map(Entry::at_ms) else {
        return true;
    };
    for x in &trace.entries[i + 1..] {
        match x {
            Entry::Driver { execution: ex, .. } if ex == execution && r.woken(x) => return true,
            Entry::Call {
                execution: ex,
                action,
                at_ms,
                ..
            } if ex == execution && action == "process-work-item" => {
                return *at_ms - from >= 60_000
            }
            _ => {}
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Paced by TPF.

/// More process-work-item calls than the scenario's budget allows.
pub(crate) fn calls_within_budget(calls: u64, budget: u64) -> Option<Violation> {
    (calls > budget).then(|| {
        v(
            "run-within-budget",
            format!("{calls} process-work-item calls, over the scenario's budget of {budget}"),
            String::new(),
        )
    })
}

/// The shortest pause a re-ask after an unchanged answer may take: anything shorter is the
/// same instant to TPF's leases and due times, which are whole seconds.
pub(crate) const MIN_PAUSE_MS: i64 = 1_000;

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
pub(crate) fn calls_paced(trace: &Trace) -> Vec<Violation> {
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
pub(crate) fn generations_paced(
    trace: &Trace,
    starts_of: &dyn Fn(&str) -> Vec<i64>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for exec in executions(trace) {
        let starts = starts_of(&exec);
        let crowded = starts
            .windows(GENERATIONS_PER_WINDOW + 1)
            .find(|win| win[GENERATIONS_PER_WINDOW] - win[0] < GENERATION_WINDOW_MS);
        if let Some(win) = crowded {
            out.push(v(
                "generations-paced",
                format!(
                    "{} driver generations of {exec} started between {} and {} ({} in all): each generation must spend its counted loop, and every loop iteration waits, before it hands over",
                    GENERATIONS_PER_WINDOW + 1,
                    clock(win[0] - trace.start_ms),
                    clock(win[GENERATIONS_PER_WINDOW] - trace.start_ms),
                    starts.len()
                ),
                String::new(),
            ));
        }
    }
    out
}

/// What the bounded re-ask checks need to know about how the run ended.
struct Watch<'a> {
    trace: &'a Trace,
    now_ms: i64,
    /// The scenario's horizon, as an instant.
    horizon_ms: i64,
    budget_spent: bool,
    /// Whether a driver of this TPF execution still runs (asleep, or parked).
    running: &'a dyn Fn(&str) -> bool,
}

impl<'a> Watch<'a> {
    fn of<P: Runner>(run: &'a Run<'_, P>, running: &'a dyn Fn(&str) -> bool) -> Watch<'a> {
        Watch {
            trace: &run.world.trace,
            now_ms: run.world.now_ms(),
            horizon_ms: run.world.trace.start_ms + run.scenario.horizon_seconds as i64 * 1000,
            budget_spent: run.budget_spent,
            running,
        }
    }

    /// Until when the run watched: a run that stops with a driver still running stopped
    /// because nothing was due before the horizon, so the horizon was watched too.
    fn until(&self, exec: &str) -> i64 {
        if (self.running)(exec) && !self.budget_spent {
            self.now_ms.max(self.horizon_ms)
        } else {
            self.now_ms
        }
    }
}

/// The next new call (another key) of the same TPF execution after trace entry `i`.
fn next_call<'a>(trace: &'a Trace, i: usize, exec: &str, key: Option<&str>) -> Option<&'a Entry> {
    trace.entries[i + 1..].iter().find(|x| {
        matches!(x, Entry::Call { execution, action, key: k, .. }
            if action == "process-work-item" && belongs(execution, exec) && (key.is_none() || k.as_deref() != key))
    })
}

/// A re-ask after trace entry `i` (at `from`) must come within `[from + 1 s, latest]`.
#[allow(clippy::too_many_arguments)]
fn bounded_reask(
    w: &Watch,
    name: &'static str,
    what: &str,
    exec: &str,
    i: usize,
    from: i64,
    key: Option<&str>,
    latest: i64,
) -> Option<Violation> {
    let trace = w.trace;
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
        None if w.until(exec) > latest && (w.running)(exec) => Some(v(
            name,
            format!(
                "after {what} at {}, {exec}'s driver had not asked TPF again by {}, past {} (the latest re-ask this answer allows)",
                at(from),
                at(w.until(exec)),
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
pub(crate) fn lease_wait_bounded<P: Runner>(run: &Run<'_, P>) -> Vec<Violation> {
    let running = |exec: &str| P::driver_running(&run.world, exec);
    let w = &Watch::of(run, &running);
    let trace = w.trace;
    let wait_ms = run.subject.plan.wakeup.lease_wait_seconds as i64 * 1000;
    let mut out = Vec::new();
    for exec in executions(trace) {
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
                w,
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

/// After a wakeup could not be registered, the driver re-asks no sooner than a second later and
/// no later than TPF's wake-up time for the await or the configured re-check, whichever is
/// later: with no wakeup registered, no one will wake it.
pub(crate) fn recheck_wait_bounded<P: Runner>(run: &Run<'_, P>, r: &dyn Reading) -> Vec<Violation> {
    let running = |exec: &str| P::driver_running(&run.world, exec);
    let w = &Watch::of(run, &running);
    let trace = w.trace;
    let recheck_ms = run.subject.plan.wakeup.recheck_seconds as i64 * 1000;
    let mut out = Vec::new();
    for exec in executions(trace) {
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
                    ..
                } if belongs(execution, &exec) => {
                    let Some(park) = r.unregistered(e) else {
                        continue;
                    };
                    let latest = *at_ms + wake_in_ms.max(recheck_ms) + MIN_PAUSE_MS;
                    out.extend(bounded_reask(
                        w,
                        "recheck-wait-bounded",
                        &format!("the wakeup token of {park:?} could not be registered"),
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
