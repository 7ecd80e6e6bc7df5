//! The pacing rule: every way back to a state the driver already ran must take time.
//!
//! The history proof bounds the events of one execution, not how fast they come: a loop that
//! asks TPF again without sleeping runs its whole budget in one instant, then hands over to a
//! new generation that does the same, so calls per unit of time have no bound at all. This rule
//! looks at the transitions that cost no time (leaving a Wait of at least a second, or a parked
//! callback through its resume or its timeout, does cost time; everything else does not) and
//! reports any cycle made only of them. A self-started next generation (continue-as-new) counts
//! as a transition back to `StartAt`; the guard rules of the proven counted loop count as
//! paced when the limit is at least 1, because reaching them takes that many counted cycles,
//! and each of those is paced if this rule finds nothing else.

use serde_json::Value;

use super::dag::{Edge, Graph};
use super::history::{counter_test, HistoryAnalysis, LoopGuard};
use super::scope::state_pointer;
use super::Ctx;
use crate::sfn::asl::{ChoiceRule, State, StateMachine, Transition};

const TIMEOUT_ERRORS: &[&str] = &["States.Timeout", "States.HeartbeatTimeout"];

/// Whether leaving a Wait state means time has passed. A literal `Timestamp` is in the past
/// from its first pass on, and `Seconds: 0` is no pause; a path is TPF's to fill (its
/// `nextDueAt`) and the mapping proof checks the waits it produces.
fn wait_paces(state: &State) -> bool {
    match state {
        State::Wait(w) => {
            w.seconds.is_some_and(|s| s >= 1)
                || w.seconds_path.is_some()
                || w.timestamp_path.is_some()
        }
        _ => false,
    }
}

/// Whether a JSON template carries `key` (plain or as a `.$` path) at any depth.
fn carries(template: &Value, key: &str) -> bool {
    match template {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == key || k.strip_suffix(".$") == Some(key) || carries(v, key)),
        Value::Array(items) => items.iter().any(|v| carries(v, key)),
        _ => false,
    }
}

/// Whether a JSON template sets `key` from a path at any depth (`"key.$"`).
fn carries_dynamic(template: &Value, key: &str) -> bool {
    match template {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.strip_suffix(".$") == Some(key) || carries_dynamic(v, key)),
        Value::Array(items) => items.iter().any(|v| carries_dynamic(v, key)),
        _ => false,
    }
}

/// A callback Task that parks until someone outside answers it. Under the TPF driver profile
/// a call to TPF's action gateway (a request that names its `operation`) is not one, whatever
/// its transport (the queue relay answers its token as soon as the gateway answers), unless it
/// hands its token to the gateway as the provider callback id: that is REGISTER_CALLBACK, which
/// TPF's wake-up answers when the await completes.
fn parks(state: &State, tpf: bool) -> bool {
    use tpf_wire::gateway::key::request::{OPERATION, PROVIDER_CALLBACK_ID};
    match state {
        State::Task(t) if t.resource.ends_with(".waitForTaskToken") => {
            let Some(p) = t.parameters.as_ref() else {
                return true;
            };
            !tpf || !carries(p, OPERATION) || carries_dynamic(p, PROVIDER_CALLBACK_ID)
        }
        _ => false,
    }
}

/// A Task that starts this same machine again: the next generation.
fn hands_over(state: &State) -> bool {
    match state {
        State::Task(t) if t.resource.ends_with("states:startExecution") => {
            t.parameters
                .as_ref()
                .and_then(|p| p.get("StateMachineArn.$"))
                .and_then(Value::as_str)
                == Some("$$.StateMachine.Id")
        }
        _ => false,
    }
}

/// Whether taking `rule` needs the guard's counter at its limit (alone or in an `And`).
fn needs_counter(rule: &ChoiceRule, guard: &LoopGuard) -> bool {
    let tests = |r: &ChoiceRule| {
        counter_test(r).is_some_and(|(p, n)| p == guard.counter_path && n == guard.limit)
    };
    tests(rule) || rule.and.as_ref().is_some_and(|and| and.iter().any(tests))
}

/// `history` is the history proof's result: the guard it found, and whether it proved a bound
/// at all. Without a proof the hand-over is not followed across generations: the history rule
/// has already rejected the loop, and with no guard every hand-over would look unpaced.
pub(crate) fn check(ctx: &mut Ctx<'_>, machine: &StateMachine, history: &HistoryAnalysis) {
    let guard = history.loop_guard.as_ref();
    let across_generations = history.max_events.is_some();
    let states = &machine.states;
    let Some(start) = states.get_index_of(&machine.start_at) else {
        return;
    };
    let tpf = ctx.opts.profile == super::Profile::TpfDriver;
    let full = Graph::new(states);
    let alive = full.reachable(start, &|_| false);
    let index = |n: &str| states.get_index_of(n);
    let edges = states
        .iter()
        .map(|(name, state)| {
            let mut out = Vec::new();
            let timed = wait_paces(state);
            let parked = parks(state, tpf);
            if let Some(Transition::Next(n)) = state.transition() {
                if !timed && !parked {
                    out.extend(index(n).map(|to| Edge { to, catcher: None }));
                }
            }
            if let State::Choice(c) = state {
                let is_guard = guard.is_some_and(|g| g.state == *name && g.limit >= 1);
                for rule in &c.choices {
                    let counted = is_guard && guard.is_some_and(|g| needs_counter(rule, g));
                    if let (Some(n), false) = (&rule.next, counted) {
                        out.extend(index(n).map(|to| Edge { to, catcher: None }));
                    }
                }
                if let Some(d) = &c.default {
                    out.extend(index(d).map(|to| Edge { to, catcher: None }));
                }
            }
            for (i, c) in state.catchers().iter().enumerate() {
                let waited = parked
                    && c.error_equals
                        .iter()
                        .all(|e| TIMEOUT_ERRORS.contains(&e.as_str()));
                if !waited {
                    out.extend(index(&c.next).map(|to| Edge {
                        to,
                        catcher: Some(i),
                    }));
                }
            }
            if across_generations && hands_over(state) {
                out.push(Edge {
                    to: start,
                    catcher: None,
                });
            }
            out
        })
        .collect();
    let unpaced = Graph { edges };
    let names: Vec<&str> = states.keys().map(String::as_str).collect();
    for cycle in unpaced.cyclic_components(&alive) {
        let at = cycle.first().copied().unwrap_or(start);
        let mut members: Vec<String> = cycle
            .iter()
            .take(6)
            .map(|&v| format!("{:?}", names.get(v).copied().unwrap_or("?")))
            .collect();
        if cycle.len() > members.len() {
            members.push(format!("and {} more", cycle.len() - members.len()));
        }
        let through_handover = cycle
            .iter()
            .any(|&v| states.get_index(v).is_some_and(|(_, s)| hands_over(s)));
        ctx.emit(
            ctx.profile_severity(),
            "ASL_LOOP_UNPACED",
            state_pointer("", names.get(at).copied().unwrap_or("?")),
            format!(
                "the loop through {} comes back without waiting{}: it can run again at once, as often as the history allows",
                members.join(", "),
                if through_handover { " (across generations: the hand-over starts the next one at once)" } else { "" }
            ),
            "put a Wait of at least 1 second (or TPF's nextDueAt through TimestampPath) or a parked callback on every way back, \
             and hand over only from the counted loop's guard",
        );
    }
}
