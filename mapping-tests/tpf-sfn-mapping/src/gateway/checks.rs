//! The gateway world's invariants: what must hold after any scenario on any engine, each
//! named, each read from the world's trace, TPF's records and the engine's drivers. A broken
//! one is a [`Violation`] naming its check.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use tpf_wire::gateway::host::POLL_WAITS_SECONDS;
use tpf_wire::gateway::key::output as output_key;
use tpf_wire::gateway::names::{binding_partition_key, delivered_sort_key};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse, Operation};
use tpf_wire::java_text::jackson_compact;
use tpf_wire::records::{ExecutionRecord, ExecutionStatus};

use super::engine::{DriverStatus, DriverView, GatewayEngine};
use super::trace::StartVia;
use super::world::{GatewayWorld, TENANT};

/// The error a gateway driver fails with when TPF's execution ended without success.
pub const EXECUTION_ENDED_ERROR: &str = tpf_wire::gateway::host::driver_error::EXECUTION_ENDED;

/// The checks, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GatewayCheck {
    OneExecutionPerSubmission,
    RequestsTpfReads,
    NumberedVersion,
    DriverEndsAsTpfEnds,
    AwaitDeadlineWhileParked,
    OneCallbackPerGeneration,
    GenerationFence,
    DeliveryEvidence,
    ReleasePinned,
    SingleLiveGeneration,
    HistoryWithinBudget,
    RetriesQueuedWhenDue,
    RedriveByOperatorOnly,
    CallsPacedByTpf,
    ParksWithoutPolling,
}

impl GatewayCheck {
    pub const ALL: [GatewayCheck; 15] = [
        Self::OneExecutionPerSubmission,
        Self::RequestsTpfReads,
        Self::NumberedVersion,
        Self::DriverEndsAsTpfEnds,
        Self::AwaitDeadlineWhileParked,
        Self::OneCallbackPerGeneration,
        Self::GenerationFence,
        Self::DeliveryEvidence,
        Self::ReleasePinned,
        Self::SingleLiveGeneration,
        Self::HistoryWithinBudget,
        Self::RetriesQueuedWhenDue,
        Self::RedriveByOperatorOnly,
        Self::CallsPacedByTpf,
        Self::ParksWithoutPolling,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::OneExecutionPerSubmission => "one-execution-per-submission",
            Self::RequestsTpfReads => "requests-tpf-reads",
            Self::NumberedVersion => "gateway-numbered-version",
            Self::DriverEndsAsTpfEnds => "driver-ends-as-tpf-ends",
            Self::AwaitDeadlineWhileParked => "await-deadline-while-parked",
            Self::OneCallbackPerGeneration => "one-callback-per-generation",
            Self::GenerationFence => "generation-fence",
            Self::DeliveryEvidence => "delivery-evidence",
            Self::ReleasePinned => "release-pinned",
            Self::SingleLiveGeneration => "single-live-generation",
            Self::HistoryWithinBudget => "history-within-budget",
            Self::RetriesQueuedWhenDue => "retries-queued-when-due",
            Self::RedriveByOperatorOnly => "redrive-by-operator-only",
            Self::CallsPacedByTpf => "calls-paced-by-tpf",
            Self::ParksWithoutPolling => "parks-without-polling",
        }
    }

    /// What must hold.
    pub fn invariant(self) -> &'static str {
        match self {
            Self::OneExecutionPerSubmission => "each key the application submits creates exactly one TPF execution, and every SUBMIT of the key answers it",
            Self::RequestsTpfReads => "every request a driver sends is one TPF's gateway reads (its Quarkus mapper and the request record's rules)",
            Self::NumberedVersion => "every gateway invoke addresses the gateway's numbered version, never the unqualified function or an alias",
            Self::DriverEndsAsTpfEnds => "a driver that ends says what TPF's record says at that moment (SUCCEEDED with TPF's result, or TPF.ExecutionEnded with TPF's status), an ended TPF execution has no running driver and a live one has one",
            Self::AwaitDeadlineWhileParked => "an await nobody completes is timed out by TPF within the grace after its deadline, while its driver is parked",
            Self::OneCallbackPerGeneration => "a generation registers one callback: never two REGISTER_CALLBACK of one (tenant, execution, generation) with different callback ids",
            Self::GenerationFence => "the wake-up never sends to a generation older than the interaction's newest binding",
            Self::DeliveryEvidence => "each callback receives at most one signal, and each received signal has its DELIVERED#<generation> row",
            Self::ReleasePinned => "every generation of an execution starts under the release TPF pinned on it, and every request it sends for the execution names that release",
            Self::SingleLiveGeneration => "at no instant do two driver generations of one TPF execution run: a hand-over starts the next generation as its own ends, and a replacement starts only after the driver it replaces ended",
            Self::HistoryWithinBudget => "no driver generation writes more history than its release was proven to (Step Functions: the compiled event budget, under the service's 25,000 events; Lambda durable functions: the service's 3,000 operations), nor is failed at the provider's cap",
            Self::RetriesQueuedWhenDue => "a retry enters TPF's work queue no earlier than the nextDue TPF set and at most one poll interval (300 s) after it: the driver's SWEEP keeps TPF's schedule, and only TPF's sweep queues work",
            Self::RedriveByOperatorOnly => "a driver never sends REDRIVE: re-driving an execution TPF ended is its operator's decision",
            Self::CallsPacedByTpf => "a TPF execution's drivers ask STATUS again no sooner than TPF's first poll wait (5 s) after an answer that said the same, unless a generation parked in between: a poll waits its rung of the ladder, and a new generation may repeat its predecessor's last answer at once only if that answer itself came after a wait",
            Self::ParksWithoutPolling => "a generation that registered its callback sends nothing to TPF until the wake-up signals the callback or the contract's longest await deadline has passed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub check: GatewayCheck,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.check.name(), self.detail)
    }
}

/// Every check over the world as it stands.
pub fn evaluate<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<Violation> {
    GatewayCheck::ALL
        .into_iter()
        .flat_map(|c| check(w, c))
        .collect()
}

/// One check.
pub fn check<E: GatewayEngine>(w: &GatewayWorld<E>, c: GatewayCheck) -> Vec<Violation> {
    let details = match c {
        GatewayCheck::OneExecutionPerSubmission => one_execution(w),
        GatewayCheck::RequestsTpfReads => requests_read(w),
        GatewayCheck::NumberedVersion => numbered_version(w),
        GatewayCheck::DriverEndsAsTpfEnds => driver_ends(w),
        GatewayCheck::AwaitDeadlineWhileParked => deadlines(w),
        GatewayCheck::OneCallbackPerGeneration => one_callback(w),
        GatewayCheck::GenerationFence => fence(w),
        GatewayCheck::DeliveryEvidence => evidence(w),
        GatewayCheck::ReleasePinned => pinned(w),
        GatewayCheck::SingleLiveGeneration => single_live(w),
        GatewayCheck::HistoryWithinBudget => history(w),
        GatewayCheck::RetriesQueuedWhenDue => retries_when_due(w),
        GatewayCheck::RedriveByOperatorOnly => redrive_by_operator(w),
        GatewayCheck::CallsPacedByTpf => paced(w),
        GatewayCheck::ParksWithoutPolling => parked_quietly(w),
    };
    details
        .into_iter()
        .map(|detail| Violation { check: c, detail })
        .collect()
}

fn one_execution<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let mut out = Vec::new();
    let keys: BTreeSet<&String> = w.trace().submissions.iter().collect();
    let executions = w.executions();
    let mut claimed = BTreeSet::new();
    for key in &keys {
        match w.execution_of(key) {
            Some(r) => {
                claimed.insert(r.execution_id.clone());
            }
            None => out.push(format!("submission {key} created no TPF execution")),
        }
    }
    for r in &executions {
        if !claimed.contains(&r.execution_id) {
            out.push(format!(
                "TPF execution {} ({}) is no submission's",
                r.execution_id, r.execution_key
            ));
        }
    }
    let mut answered: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for call in w.trace().calls(Operation::Submit) {
        let (Ok(req), Ok(text)) = (ActionRequest::read(&call.request), &call.answer) else {
            continue;
        };
        if let Ok(ActionResponse {
            checkpoint: Some(c),
            ..
        }) = ActionResponse::read(text)
        {
            answered
                .entry(req.idempotency_key.unwrap_or_default())
                .or_default()
                .insert(c.execution_id);
        }
    }
    for (key, ids) in answered {
        if ids.len() > 1 {
            out.push(format!("SUBMIT of key {key} answered executions {ids:?}"));
        }
    }
    out
}

fn requests_read<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    w.trace()
        .invocations
        .iter()
        .filter_map(|i| {
            i.read_error
                .as_ref()
                .map(|e| format!("at {}: {} refused: {e}", i.at_ms, i.request))
        })
        .collect()
}

/// `arn:<partition>:lambda:<region>:<account>:function:<name>:<digits>`.
pub fn is_numbered_version(arn: &str) -> bool {
    let parts: Vec<&str> = arn.split(':').collect();
    parts.len() == 8
        && parts[0] == "arn"
        && parts[2] == "lambda"
        && parts[5] == "function"
        && !parts[7].is_empty()
        && parts[7].bytes().all(|b| b.is_ascii_digit())
}

fn numbered_version<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    w.trace()
        .invocations
        .iter()
        .filter(|i| !is_numbered_version(&i.function_arn))
        .map(|i| format!("at {}: invoked {}", i.at_ms, i.function_arn))
        .collect()
}

/// The TPF execution a driver drives: its resume id, or the execution its key created.
fn execution_of_driver<E: GatewayEngine>(w: &GatewayWorld<E>, d: &DriverView) -> Option<String> {
    let input = ExecutionInput::read(&d.input).ok()?;
    match input.resume_execution_id {
        Some(id) => Some(id),
        None => w
            .execution_of(&input.idempotency_key)
            .map(|r| r.execution_id),
    }
}

/// TPF's statuses of an execution at `at_ms`, from its commit log: the status before that
/// instant and every status committed at it (a driver that ended in the same millisecond as a
/// commit may have seen either side of it).
fn statuses_at<E: GatewayEngine>(
    w: &GatewayWorld<E>,
    execution_id: &str,
    at_ms: i64,
) -> Vec<ExecutionStatus> {
    let log = w.coordinator().log().transitions();
    let mine = || log.iter().filter(|t| t.execution_id == execution_id);
    let before = mine().rfind(|t| t.at_ms < at_ms).map(|t| t.status);
    before
        .into_iter()
        .chain(mine().filter(|t| t.at_ms == at_ms).map(|t| t.status))
        .collect()
}

/// TPF's root executions by id.
fn records_by_id<E: GatewayEngine>(w: &GatewayWorld<E>) -> BTreeMap<String, ExecutionRecord> {
    w.executions()
        .into_iter()
        .map(|r| (r.execution_id.clone(), r))
        .collect()
}

fn driver_ends<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let mut out = Vec::new();
    let records = records_by_id(w);
    let mut by_execution: BTreeMap<String, Vec<DriverView>> = BTreeMap::new();
    for d in w.engine.drivers() {
        match execution_of_driver(w, &d) {
            Some(e) => by_execution.entry(e).or_default().push(d),
            None if d.status == DriverStatus::Succeeded => {
                out.push(format!("driver {} succeeded for no TPF execution", d.name))
            }
            None => {}
        }
    }
    for d in by_execution.values().flatten() {
        let execution = execution_of_driver(w, d).unwrap_or_default();
        let Some(ended) = d.ended_at_ms else { continue };
        let tpf = statuses_at(w, &execution, ended);
        let final_output = d
            .output
            .as_deref()
            .and_then(|o| serde_json::from_str::<Value>(o).ok())
            .filter(|o| o.get(output_key::RESULT_JSON).is_some());
        match (d.status, &d.error, final_output) {
            (DriverStatus::Succeeded, _, Some(output)) => {
                if !tpf.contains(&ExecutionStatus::Succeeded) {
                    out.push(format!(
                        "driver {} succeeded with a result while TPF's execution was {tpf:?}",
                        d.name
                    ));
                    continue;
                }
                let expected = records
                    .get(&execution)
                    .and_then(|r| r.result_payload.as_ref())
                    .map(jackson_compact);
                let got = output.get(output_key::RESULT_JSON).and_then(Value::as_str);
                if got != expected.as_deref()
                    || output.get("executionId").and_then(Value::as_str) != Some(&execution)
                {
                    out.push(format!(
                        "driver {} answered {output} for TPF's result {expected:?}",
                        d.name
                    ));
                }
            }
            (DriverStatus::Failed, Some((error, cause)), _) if error == EXECUTION_ENDED_ERROR => {
                let said = cause.strip_prefix("TPF execution ended with status ");
                if !tpf.iter().any(|s| Some(s.to_string().as_str()) == said) {
                    out.push(format!(
                        "driver {} failed with `{cause}` while TPF's execution was {tpf:?}",
                        d.name
                    ));
                }
            }
            _ => {}
        }
    }
    for (id, record) in &records {
        let drivers = by_execution.get(id).map(Vec::as_slice).unwrap_or(&[]);
        let running = drivers.iter().filter(|d| !d.status.ended()).count();
        let ended_tpf =
            record.status.terminal() || record.status == ExecutionStatus::RemoteOutcomeUnknown;
        if ended_tpf && running > 0 {
            out.push(format!(
                "TPF's execution {id} is {} and {running} driver(s) still run",
                record.status
            ));
        }
        if !ended_tpf && running == 0 {
            out.push(format!(
                "TPF's execution {id} is {} and no driver runs for it",
                record.status
            ));
        }
        if record.status == ExecutionStatus::Succeeded
            && !drivers.iter().any(|d| {
                d.status == DriverStatus::Succeeded
                    && d.output
                        .as_deref()
                        .is_some_and(|o| o.contains("\"resultJson\""))
            })
        {
            out.push(format!(
                "TPF's execution {id} succeeded and no driver answered its result"
            ));
        }
    }
    out
}

fn deadlines<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let grace = w.setup().deadline_grace_ms;
    let now = w.now();
    w.interactions()
        .into_iter()
        .filter_map(|i| {
            let deadline = i.deadline_epoch_ms?;
            let late = deadline + grace;
            if !i.status.terminal() && now > late {
                return Some(format!(
                    "await {} is {} {} s past its deadline",
                    i.interaction_id,
                    i.status,
                    (now - deadline) / 1000
                ));
            }
            let timed_out = i.status == tpf_wire::records::AwaitInteractionStatus::TimedOut;
            (timed_out && i.updated_at_epoch_ms > late).then(|| {
                format!(
                    "await {} timed out {} s after its deadline",
                    i.interaction_id,
                    (i.updated_at_epoch_ms - deadline) / 1000
                )
            })
        })
        .collect()
}

fn one_callback<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let mut callbacks: BTreeMap<(String, String, i64), BTreeSet<String>> = BTreeMap::new();
    for call in w.trace().calls(Operation::RegisterCallback) {
        let Ok(r) = ActionRequest::read(&call.request) else {
            continue;
        };
        callbacks
            .entry((
                r.tenant_id.clone(),
                r.execution_id.clone().unwrap_or_default(),
                r.generation,
            ))
            .or_default()
            .insert(r.provider_callback_id.clone().unwrap_or_default());
    }
    callbacks
        .into_iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|((_, e, g), ids)| {
            format!(
                "execution {e} generation {g} registered {} callbacks",
                ids.len()
            )
        })
        .collect()
}

fn fence<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    w.trace()
        .sends
        .iter()
        .filter(|s| s.newest_bound_generation.is_some_and(|n| n > s.generation))
        .map(|s| {
            format!(
                "at {}: sent to generation {} of interaction {} bound up to generation {:?}",
                s.at_ms, s.generation, s.interaction_id, s.newest_bound_generation
            )
        })
        .collect()
}

fn evidence<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let mut out = Vec::new();
    let rows: BTreeSet<(String, String)> = w
        .bindings()
        .keys()
        .into_iter()
        .map(|(pk, sk, _)| (pk, sk))
        .collect();
    let mut received: BTreeMap<&str, usize> = BTreeMap::new();
    for s in w.trace().sends.iter().filter(|s| s.result.received()) {
        *received.entry(&s.callback_id).or_default() += 1;
        let key = (
            binding_partition_key(&s.tenant_id, &s.interaction_id),
            delivered_sort_key(s.generation),
        );
        if !rows.contains(&key) {
            out.push(format!(
                "generation {} of interaction {} was signalled and has no {}",
                s.generation, s.interaction_id, key.1
            ));
        }
    }
    for (callback, n) in received {
        if n > 1 {
            out.push(format!("callback {callback} received {n} signals"));
        }
    }
    out
}

fn pinned<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let mut out = Vec::new();
    let records = records_by_id(w);
    let pin = |r: &ExecutionRecord| {
        (
            r.pipeline_id.clone(),
            r.contract_version.clone(),
            r.release_version.clone(),
        )
    };
    for start in &w.trace().starts {
        let Some(execution) = start.input.resume_execution_id.as_deref() else {
            continue;
        };
        let Some(record) = records.get(execution) else {
            continue;
        };
        let started = (
            start.input.pipeline_id.clone(),
            start.input.contract_version.clone(),
            start.input.release_version.clone(),
        );
        if started != pin(record) {
            out.push(format!(
                "generation {} of {execution} started under {started:?}, TPF pinned {:?}",
                start.input.generation,
                pin(record)
            ));
        }
    }
    // Every request naming one of TPF's executions (all but SUBMIT, which creates the pin).
    for call in &w.trace().invocations {
        let Ok(r) = ActionRequest::read(&call.request) else {
            continue;
        };
        let Some(record) = r.execution_id.as_deref().and_then(|e| records.get(e)) else {
            continue;
        };
        let named = (
            r.pipeline_id.clone().unwrap_or_default(),
            r.contract_version.clone().unwrap_or_default(),
            r.release_version.clone().unwrap_or_default(),
        );
        if r.tenant_id == TENANT && named != pin(record) {
            out.push(format!(
                "at {}: {} of generation {} of {} named {named:?}, TPF pinned {:?}",
                call.at_ms,
                r.operation,
                r.generation,
                record.execution_id,
                pin(record)
            ));
        }
    }
    out
}

/// Each TPF execution's drivers, live from their start to their end (or now): no driver the
/// host started (the ingress, a hand-over, the wake-up, the reconciler) may overlap another of
/// its execution by a millisecond. A hand-over's start is applied when the engine hands control
/// back, at the instant the handing generation ended. A start by TPF's operator may race a live
/// generation (TPF's scenario 15 does): the generation fence keeps the older one from being
/// signalled, and `generation-fence` checks it.
fn single_live<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let now = w.now();
    let by_operator: BTreeSet<&str> = w
        .trace()
        .starts
        .iter()
        .filter(|s| s.via == StartVia::Operator)
        .map(|s| s.name.as_str())
        .collect();
    let mut by_execution: BTreeMap<String, Vec<DriverView>> = BTreeMap::new();
    for d in w.engine.drivers() {
        if let Some(e) = execution_of_driver(w, &d) {
            by_execution.entry(e).or_default().push(d);
        }
    }
    let mut out = Vec::new();
    for (execution, drivers) in &by_execution {
        for (i, a) in drivers.iter().enumerate() {
            for b in &drivers[i + 1..] {
                let later = if b.started_at_ms >= a.started_at_ms {
                    b
                } else {
                    a
                };
                if by_operator.contains(later.name.as_str()) {
                    continue;
                }
                let from = a.started_at_ms.max(b.started_at_ms);
                let to = a
                    .ended_at_ms
                    .unwrap_or(now)
                    .min(b.ended_at_ms.unwrap_or(now));
                if to > from {
                    out.push(format!(
                        "drivers {} and {} of {execution} both ran for {} ms from {from}",
                        a.name,
                        b.name,
                        to - from
                    ));
                }
            }
        }
    }
    out
}

fn history<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    w.engine
        .drivers()
        .into_iter()
        .filter(|d| d.history.written > d.history.limit || d.history.capped)
        .map(|d| {
            let h = d.history;
            format!(
                "driver {} wrote {} {} (limit {}){}",
                d.name,
                h.written,
                h.unit,
                h.limit,
                if h.capped {
                    ", and the provider failed it at its cap"
                } else {
                    ""
                }
            )
        })
        .collect()
}

/// The longest wait of TPF's poll ladder: a due retry waits at most this for a driver's SWEEP.
pub const LONGEST_POLL_MS: i64 = 300_000;

fn retries_when_due<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    w.trace()
        .dispatches
        .iter()
        .filter(|d| d.status == ExecutionStatus::WaitRetry)
        .filter(|d| !(0..=LONGEST_POLL_MS).contains(&(d.at_ms - d.next_due_ms)))
        .map(|d| {
            format!(
                "a retry of {} was queued at {}, {} ms after its nextDue {}",
                d.execution_id,
                d.at_ms,
                d.at_ms - d.next_due_ms,
                d.next_due_ms
            )
        })
        .collect()
}

fn redrive_by_operator<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    w.trace()
        .calls(Operation::Redrive)
        .map(|c| format!("at {}: a driver sent {}", c.at_ms, c.request))
        .collect()
}

/// The least time between two STATUS answers that said the same, with no park between them:
/// TPF's ladder's first rung (5 s). A driver that polls faster than TPF's own driver ever does
/// (every second, the least wait a durable condition allows) breaks it.
pub const LEAST_POLL_MS: i64 = POLL_WAITS_SECONDS[0] as i64 * 1_000;

/// The last STATUS answer of one TPF execution, whichever generation asked.
struct LastStatus {
    at_ms: i64,
    status: String,
    generation: i64,
    /// It repeated the answer before it at once, across a hand-over.
    at_once: bool,
}

/// Per TPF execution, across its generations: a STATUS answer that says what the one before it
/// said, less than the ladder's first rung later with no park (an answered REGISTER_CALLBACK)
/// between them, breaks the pace. A new generation cannot inherit its predecessor's answer,
/// so its first STATUS may repeat it at once, once: the repeat before it must have waited. A
/// run of generations that each read TPF and hand over at once (a registration TPF keeps
/// refusing, handed over without a wait) breaks it at its second hand-over.
fn paced<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let mut last: BTreeMap<String, LastStatus> = BTreeMap::new();
    let mut out = Vec::new();
    for call in &w.trace().invocations {
        let Ok(r) = ActionRequest::read(&call.request) else {
            continue;
        };
        let execution = r.execution_id.clone().unwrap_or_default();
        match r.operation {
            Operation::RegisterCallback if call.answer.is_ok() => {
                last.remove(&execution);
            }
            Operation::Status => {
                let Some(status) = call
                    .answer
                    .as_ref()
                    .ok()
                    .and_then(|t| ActionResponse::read(t).ok())
                    .and_then(|a| a.execution_status)
                else {
                    continue;
                };
                let mut at_once = false;
                if let Some(before) = last.get(&execution) {
                    let gap = call.at_ms - before.at_ms;
                    if before.status == status && gap < LEAST_POLL_MS {
                        if before.generation == r.generation {
                            out.push(format!(
                                "generation {} of {execution} asked STATUS at {} and again {gap} ms later, both {status}",
                                r.generation, before.at_ms
                            ));
                        } else {
                            if before.at_once {
                                out.push(format!(
                                    "generation {} of {execution} asked STATUS {gap} ms after generation {}'s answer, both {status}, itself a repeat at once: generations handed over without a wait",
                                    r.generation, before.generation
                                ));
                            }
                            at_once = true;
                        }
                    }
                }
                last.insert(
                    execution,
                    LastStatus {
                        at_ms: call.at_ms,
                        status,
                        generation: r.generation,
                        at_once,
                    },
                );
            }
            _ => {}
        }
    }
    out.truncate(10);
    out
}

fn parked_quietly<E: GatewayEngine>(w: &GatewayWorld<E>) -> Vec<String> {
    let longest = w.setup().longest_await_timeout_ms();
    let trace = w.trace();
    // Per generation: where it parked (when, on which callback) since its last call.
    let mut parks: BTreeMap<(String, i64), (i64, String)> = BTreeMap::new();
    let mut out = Vec::new();
    for call in &trace.invocations {
        let Ok(r) = ActionRequest::read(&call.request) else {
            continue;
        };
        let key = (r.execution_id.clone().unwrap_or_default(), r.generation);
        if let Some((at, callback)) = parks.remove(&key) {
            // A signal may reach the callback before its registration is answered (the
            // driver holds it); a provider's close of the callback wakes it too.
            let woken =
                trace.sends.iter().any(|s| {
                    s.callback_id == callback && s.result.received() && s.at_ms <= call.at_ms
                }) || trace
                    .closed_callbacks
                    .iter()
                    .any(|(closed_at, id)| *id == callback && *closed_at <= call.at_ms);
            if !woken && call.at_ms < at + longest {
                out.push(format!(
                    "generation {} of {} parked on its callback at {at} and sent {} {} ms later, unsignalled, before the longest await deadline ({longest} ms)",
                    key.1,
                    key.0,
                    r.operation,
                    call.at_ms - at
                ));
            }
        }
        if r.operation == Operation::RegisterCallback && call.answer.is_ok() {
            if let Some(callback) = r.provider_callback_id {
                parks.insert(key, (call.at_ms, callback));
            }
        }
    }
    out
}
