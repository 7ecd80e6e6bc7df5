//! A scenario's trace: driver history, action calls, TPF record transitions, bridge and actor
//! actions, in causal order. Rendered as stable, readable text for snapshots and reports.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Entry {
    /// A history event of a driver or sweeper execution.
    Driver {
        at_ms: i64,
        execution: String,
        sweeper: bool,
        /// The AWS event type: one of the interpreter's names, so no copy per event.
        event: &'static str,
        state: Option<String>,
        detail: Option<String>,
    },
    /// One delivery of an action call. `execution` is the calling driver execution's name;
    /// `identity` the (pipelineId, contractVersion, releaseVersion) it sent; `status` and
    /// `next_due_ms` what TPF answered (for process-work-item).
    Call {
        at_ms: i64,
        execution: String,
        action: String,
        key: Option<String>,
        identity: Option<[String; 3]>,
        status: Option<String>,
        next_due_ms: Option<i64>,
        /// The answer's `await.wakeInSeconds`, when it parked the execution.
        wake_in_s: Option<i64>,
        outcome: String,
        fault: Option<String>,
    },
    /// A committed TPF record change.
    Record {
        at_ms: i64,
        execution_id: String,
        version: i64,
        status: String,
        step: u32,
        attempt: u32,
        cause: String,
    },
    Bridge {
        at_ms: i64,
        what: String,
    },
    Actor {
        at_ms: i64,
        what: String,
    },
}

impl Entry {
    pub fn at_ms(&self) -> i64 {
        match self {
            Entry::Driver { at_ms, .. }
            | Entry::Call { at_ms, .. }
            | Entry::Record { at_ms, .. }
            | Entry::Bridge { at_ms, .. }
            | Entry::Actor { at_ms, .. } => *at_ms,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    pub start_ms: i64,
    pub entries: Vec<Entry>,
}

/// Events that say the driver went somewhere, rendered `→ <state or operation>`: a Step
/// Functions state entered, a durable operation started.
fn entered(event: &str) -> bool {
    event.ends_with("StateEntered")
        || matches!(event, "StepStarted" | "WaitStarted" | "CallbackStarted")
}

/// History events worth a line; the rest (Exited, Scheduled, Started, Succeeded, Submitted, and
/// the durable engine's step and wait successes, child contexts and invocation ends) are implied
/// and counted in the metrics.
fn shown(event: &str, state: Option<&str>) -> bool {
    if event == "StepStarted"
        && state.is_some_and(|s| s.ends_with(durable_interp::SUBMITTER_SUFFIX))
    {
        // A callback's submitter step: the callback's own line says it parked.
        return false;
    }
    entered(event)
        || matches!(
            event,
            "ExecutionStarted"
                | "ExecutionSucceeded"
                | "ExecutionFailed"
                | "ExecutionAborted"
                | "ExecutionTimedOut"
                | "ExecutionRedriven"
                | "TaskFailed"
                | "TaskTimedOut"
                | "ExecutionStopped"
                | "StepFailed"
                | "CallbackSucceeded"
                | "CallbackFailed"
                | "CallbackTimedOut"
                | "InvocationCompleted"
        )
}

/// States of the sweeper worth a line: the ones that act.
const SWEEPER_ACTIONS: &[&str] = &["Wake the parked driver", "Start a recovery driver"];

impl Trace {
    pub fn push(&mut self, e: Entry) {
        self.entries.push(e);
    }

    /// Replaces long ids by short aliases (`exec-1`, …) in order of first appearance, so
    /// snapshots read well and do not churn with id derivation.
    fn aliases(&self) -> Vec<(String, String)> {
        let mut ids: Vec<String> = Vec::new();
        for e in &self.entries {
            if let Entry::Record { execution_id, .. } = e {
                if !ids.contains(execution_id) {
                    ids.push(execution_id.clone());
                }
            }
        }
        ids.into_iter()
            .enumerate()
            .map(|(i, id)| (id, format!("exec-{}", i + 1)))
            .collect()
    }

    pub fn render(&self) -> String {
        let aliases = self.aliases();
        fn alias<'a>(aliases: &[(String, String)], s: &'a str) -> Cow<'a, str> {
            let mut s = Cow::Borrowed(s);
            for (id, a) in aliases {
                // Most lines name no execution id: skip the copy `replace` always makes.
                if s.contains(id.as_str()) {
                    s = Cow::Owned(s.replace(id.as_str(), a));
                }
            }
            s
        }
        let mut out = String::new();
        for e in &self.entries {
            // The clock is written per shown line only: most history events are not shown.
            let t = Clock(e.at_ms() - self.start_ms);
            match e {
                Entry::Driver {
                    execution,
                    sweeper,
                    event,
                    state,
                    detail,
                    ..
                } => {
                    // An invocation's end is implied, unless it ended otherwise than by
                    // suspending or finishing (a crash).
                    if !shown(event, state.as_deref())
                        || (*event == "InvocationCompleted" && detail.is_none())
                    {
                        continue;
                    }
                    if *sweeper
                        && !(entered(event)
                            && state
                                .as_deref()
                                .is_some_and(|s| SWEEPER_ACTIONS.contains(&s)))
                        && *event != "TaskFailed"
                    {
                        continue;
                    }
                    let who = if *sweeper { "sweeper" } else { "driver " };
                    let _ = write!(out, "{t} {who} {:<22} ", alias(&aliases, execution));
                    match (*event, state) {
                        (ev, Some(s)) if entered(ev) => {
                            let _ = writeln!(out, "→ {}", alias(&aliases, s));
                        }
                        (ev, _) => match detail {
                            Some(d) => {
                                let _ = writeln!(
                                    out,
                                    "{} ({})",
                                    alias(&aliases, ev),
                                    alias(&aliases, d)
                                );
                            }
                            None => {
                                let _ = writeln!(out, "{}", alias(&aliases, ev));
                            }
                        },
                    }
                }
                Entry::Call {
                    action,
                    key,
                    outcome,
                    fault,
                    ..
                } => {
                    let _ = write!(out, "{t} call    {action}");
                    if let Some(k) = key.as_deref() {
                        let _ = write!(out, " [{}]", alias(&aliases, k));
                    }
                    let _ = write!(out, " → {}", alias(&aliases, outcome));
                    if let Some(f) = fault.as_deref() {
                        let _ = write!(out, " ⚡{f}");
                    }
                    out.push('\n');
                }
                Entry::Record {
                    execution_id,
                    version,
                    status,
                    step,
                    attempt,
                    cause,
                    ..
                } => {
                    let _ = writeln!(
                        out,
                        "{t} tpf     {:<22} v{version} {status} step {step} attempt {attempt} ({cause})",
                        alias(&aliases, execution_id)
                    );
                }
                Entry::Bridge { what, .. } => {
                    let _ = writeln!(out, "{t} bridge  {}", alias(&aliases, what));
                }
                Entry::Actor { what, .. } => {
                    let _ = writeln!(out, "{t} actor   {}", alias(&aliases, what));
                }
            }
        }
        out
    }

    /// Counts of shown lines by kind, for quick sanity in reports.
    pub fn summary(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for e in &self.entries {
            let k = match e {
                Entry::Driver { .. } => "driver-events",
                Entry::Call { .. } => "calls",
                Entry::Record { .. } => "record-transitions",
                Entry::Bridge { .. } => "bridge-actions",
                Entry::Actor { .. } => "actor-actions",
            };
            *m.entry(k).or_insert(0) += 1;
        }
        m
    }
}

pub use crate::gateway::trace::clock;
use crate::gateway::trace::Clock;
