//! Transitions: every target resolves, every state says how it continues, every state is
//! reachable and something terminal is. Checked in each scope separately because transitions
//! never cross a Parallel branch or Map processor boundary.

use crate::sfn::asl::{State, Transition};
use crate::sfn::validate::dag::Graph;
use crate::sfn::validate::scope::Scope;
use crate::sfn::validate::Ctx;

pub(crate) fn check(ctx: &mut Ctx<'_>, scopes: &[Scope<'_>]) {
    for scope in scopes {
        check_scope(ctx, scope);
    }
}

fn check_scope(ctx: &mut Ctx<'_>, scope: &Scope<'_>) {
    let start = scope.states.get_index_of(scope.start_at);
    if start.is_none() {
        ctx.error(
            "ASL_MISSING_TRANSITION_TARGET",
            format!("{}/StartAt", scope.pointer),
            format!(
                "StartAt names {:?}, which is not a state here",
                scope.start_at
            ),
            "point StartAt at one of this machine's (or branch's) own states",
        );
    }
    for (name, state) in scope.states {
        let ptr = scope.state_pointer(name);
        for (suffix, target) in state.successors() {
            if !scope.states.contains_key(target) {
                ctx.error(
                    "ASL_MISSING_TRANSITION_TARGET",
                    format!("{ptr}{suffix}"),
                    format!("state {name:?} transitions to {target:?}, which is not a state in the same scope"),
                    "fix the state name (names are case-sensitive); transitions cannot leave a Parallel branch or Map processor",
                );
            }
        }
        if let Some(Transition::Missing) = state.transition() {
            let (has_next, has_end) = match state {
                State::Task(s) => (s.next.is_some(), s.end.is_some()),
                State::Wait(s) => (s.next.is_some(), s.end.is_some()),
                State::Pass(s) => (s.next.is_some(), s.end.is_some()),
                State::Map(s) => (s.next.is_some(), s.end.is_some()),
                State::Parallel(s) => (s.next.is_some(), s.end.is_some()),
                _ => (false, false),
            };
            let what = if has_next && has_end {
                "has both `Next` and `End`"
            } else if has_end {
                "has `End: false` and no `Next`"
            } else {
                "has neither `Next` nor `End`"
            };
            ctx.error(
                "ASL_MISSING_NEXT_OR_END",
                ptr,
                format!("{} state {name:?} {what}", state.type_name()),
                "give the state exactly one of `\"Next\": \"<state>\"` or `\"End\": true`",
            );
        }
    }
    let Some(start) = start else { return };
    let graph = Graph::new(scope.states);
    let reachable = graph.reachable(start, &|_| false);
    let mut any_terminal = false;
    for (i, (name, state)) in scope.states.iter().enumerate() {
        if reachable.get(i).copied().unwrap_or(false) {
            any_terminal |= state.is_terminal();
        } else {
            ctx.error(
                "ASL_UNREACHABLE_STATE",
                scope.state_pointer(name),
                format!("state {name:?} cannot be reached from StartAt {:?}", scope.start_at),
                "remove the state or add a transition to it; Step Functions rejects unreachable states",
            );
        }
    }
    if !any_terminal {
        ctx.error(
            "ASL_NO_REACHABLE_TERMINAL",
            format!("{}/StartAt", scope.pointer),
            "no Succeed, Fail or `End: true` state is reachable from StartAt, so the machine can never finish",
            "add an exit: a Choice rule or Catch leading to Succeed/Fail, or `\"End\": true` on the last state",
        );
    }
}
