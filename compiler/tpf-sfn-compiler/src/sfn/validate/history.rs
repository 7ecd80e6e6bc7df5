//! The static history-budget proof: an upper bound on the events one execution can write,
//! compared with the 25,000-event hard cap (or the caller's budget).
//!
//! Cost of one visit to a state (events AWS writes; conservative where AWS writes fewer):
//!
//! | state | events |
//! |---|---|
//! | Task | 5: `TaskStateEntered`, `TaskScheduled`, `TaskStarted`, `TaskSucceeded`/`Failed`/`TimedOut`, `TaskStateExited`; +1 (`TaskSubmitted`) for `.waitForTaskToken` and `.sync` resources |
//! | Task retries | each retry repeats everything but Entered/Exited (3, or 4 with `TaskSubmitted`); worst case is the **sum** of `MaxAttempts` (default 3) over all retriers |
//! | Pass, Wait, Choice, Succeed | 2: Entered, Exited |
//! | Fail | 1: `FailStateEntered` |
//! | Map | 4 (`MapStateEntered`, `MapStateStarted`, `MapStateSucceeded`, `MapStateExited`) + items × (2 (`MapIterationStarted`, `MapIterationSucceeded`) + worst body); items from `map_item_bounds` |
//! | Parallel | 4 (Entered, Started, Succeeded, Exited) + Σ over branches (2 + worst branch) |
//! | Map/Parallel retries | each retry counted as one more full run (sum of `MaxAttempts`) |
//!
//! plus `ExecutionStarted` and the final `ExecutionSucceeded`/`Failed`/`TimedOut` (2).

use serde::Serialize;
use serde_json::Value;

use super::dag::{Edge, Graph};
use super::paths::{parse_intrinsic, simple_segments, IntrinsicArg};
use super::scope::state_pointer;
use super::Ctx;
use crate::sfn::asl::{ChoiceRule, State, StateMachine, SubMachine};

const EXECUTION_EVENTS: u64 = 2;
const TASK_EVENTS: u64 = 5;
const FLOW_EVENTS: u64 = 2;
const FAIL_EVENTS: u64 = 1;
const CONTAINER_EVENTS: u64 = 4;
const ITERATION_EVENTS: u64 = 2;

/// The worst-case history of one execution.
///
/// Without a loop, `max_events = fixed` = 2 + the heaviest path from `StartAt` to an end.
///
/// With one loop guarded by a counter (`loop_guard` = Choice `G`, counter path `P`, limit `N`):
///
/// ```text
/// max_events = fixed + (N + 1) × per_iteration
/// fixed          = 2 + max(prefix + suffix, bypass)
/// per_iteration  = cost(G) + heaviest path from a loop successor of G back to G (exclusive)
/// prefix         = heaviest path StartAt → G, excluding G (first arrival at G)
/// suffix         = cost(G) + heaviest path from G to an end that never returns to G
/// bypass         = heaviest path StartAt → end that never visits G
/// ```
///
/// Why it is an upper bound: the counter is ≥ 0 on entry to the loop, only the increment Pass
/// states (`P := P + k`, k ≥ 1) write it inside the loop, and every cycle through `G` passes
/// an increment, so at the j-th visit to `G` the counter is ≥ j − 1; at visit N + 1 it is ≥ N
/// and `G` leaves the loop (rules before the guard rule also leave it). So at most N + 1
/// visits, N full cycles; the formula charges one spare cycle. `fixed` and `per_iteration`
/// do not depend on `N`, so a compiler can solve for the largest `N` under a budget.
///
/// `max_events` is `None` when no bound could be proved (unbounded loop, Map without an item
/// bound); then `fixed` is 0 and `per_iteration` `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct HistoryAnalysis {
    pub max_events: Option<u64>,
    pub loop_guard: Option<LoopGuard>,
    pub per_iteration: Option<u64>,
    pub fixed: u64,
}

/// The Choice state that bounds the one loop, the counter it reads and the limit it compares
/// against with `NumericGreaterThanEquals`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoopGuard {
    pub state: String,
    pub counter_path: String,
    pub limit: u64,
}

pub(crate) fn analyze(ctx: &mut Ctx<'_>, machine: &StateMachine) -> HistoryAnalysis {
    let states = &machine.states;
    // A missing StartAt is the graph rule's to report; there is nothing to bound.
    let Some(start) = states.get_index_of(&machine.start_at) else {
        return HistoryAnalysis::default();
    };
    let graph = Graph::new(states);
    let alive = graph.reachable(start, &|_| false);
    let mut provable = true;
    let mut weights = vec![0u64; graph.len()];
    for (i, (name, state)) in states.iter().enumerate() {
        if alive.get(i).copied().unwrap_or(false) {
            match cost(ctx, &state_pointer("", name), name, state) {
                Some(w) => weights[i] = w,
                None => provable = false,
            }
        }
    }
    let weight = |v: usize| weights.get(v).copied().unwrap_or(0);
    let cycles = graph.cyclic_components(&alive);
    let names: Vec<&str> = states.keys().map(String::as_str).collect();
    let name_of = |v: usize| names.get(v).copied().unwrap_or("?");
    let mut analysis = match cycles.as_slice() {
        [] => {
            let fixed = graph
                .longest_from(&alive, &|_, _| true, &weight)
                .and_then(|best| best.get(start).copied())
                .unwrap_or(0)
                .saturating_add(EXECUTION_EVENTS);
            HistoryAnalysis {
                max_events: Some(fixed),
                loop_guard: None,
                per_iteration: None,
                fixed,
            }
        }
        [scc] => match prove_loop(states, &graph, &alive, start, scc, &weight) {
            Ok(proof) => {
                let max = proof.fixed.saturating_add(
                    proof
                        .guard
                        .limit
                        .saturating_add(1)
                        .saturating_mul(proof.per_iteration),
                );
                HistoryAnalysis {
                    max_events: Some(max),
                    loop_guard: Some(proof.guard),
                    per_iteration: Some(proof.per_iteration),
                    fixed: proof.fixed,
                }
            }
            Err((at, reason)) => {
                // Generated drivers have loops through hundreds of await states; name a few.
                let mut members: Vec<String> = scc
                    .iter()
                    .take(6)
                    .map(|&v| format!("{:?}", name_of(v)))
                    .collect();
                if scc.len() > members.len() {
                    members.push(format!("and {} more", scc.len() - members.len()));
                }
                ctx.error(
                    "ASL_HISTORY_UNBOUNDED",
                    state_pointer("", name_of(at)),
                    format!("the loop through {} has no proven bound: {reason}", members.join(", ")),
                    "guard the loop with a Choice rule `{\"Variable\": P, \"NumericGreaterThanEquals\": N}` that leaves it, \
                     increment P with a Pass `\"x.$\": \"States.MathAdd(P, 1)\"` on every cycle, and set P to 0 before the loop",
                );
                provable = false;
                HistoryAnalysis::default()
            }
        },
        [first, ..] => {
            let at = first.first().copied().unwrap_or(start);
            ctx.error(
                "ASL_HISTORY_UNBOUNDED",
                state_pointer("", name_of(at)),
                format!("the definition has {} separate loops; the history proof bounds exactly one counted loop", cycles.len()),
                "merge the loops into one counted loop, or move inner loops into a Map/child execution",
            );
            provable = false;
            HistoryAnalysis::default()
        }
    };
    if !provable {
        analysis.max_events = None;
        analysis.per_iteration = None;
        analysis.fixed = 0;
        return analysis;
    }
    if let Some(max) = analysis.max_events {
        if max > ctx.opts.event_limit {
            let pointer = analysis
                .loop_guard
                .as_ref()
                .map(|g| state_pointer("", &g.state))
                .unwrap_or_default();
            let formula = match (&analysis.loop_guard, analysis.per_iteration) {
                (Some(g), Some(per)) => {
                    format!(" = {} + ({} + 1) × {per}", analysis.fixed, g.limit)
                }
                _ => String::new(),
            };
            ctx.error(
                "ASL_HISTORY_BUDGET_EXCEEDED",
                pointer,
                format!(
                    "one execution can write up to {max}{formula} history events, over the limit of {}",
                    ctx.opts.event_limit
                ),
                "lower the loop limit so that fixed + (limit + 1) × per-iteration stays under the limit, \
                 and continue in a new execution when it is reached",
            );
        }
    }
    analysis
}

fn is_long_task(resource: &str) -> bool {
    resource.ends_with(".waitForTaskToken")
        || resource.ends_with(".sync")
        || resource.contains(".sync:")
}

fn total_attempts(state: &State) -> u64 {
    state
        .retriers()
        .iter()
        .fold(0u64, |acc, r| acc.saturating_add(r.attempts()))
}

/// Worst-case events of one visit to `state`, retries included; `None` (with a diagnostic)
/// when it cannot be bounded.
fn cost(ctx: &mut Ctx<'_>, ptr: &str, name: &str, state: &State) -> Option<u64> {
    let attempts = total_attempts(state);
    match state {
        State::Task(t) => {
            let once = TASK_EVENTS + u64::from(is_long_task(&t.resource));
            Some(once.saturating_add(attempts.saturating_mul(once - 2)))
        }
        State::Pass(_) | State::Wait(_) | State::Choice(_) | State::Succeed(_) => Some(FLOW_EVENTS),
        State::Fail(_) => Some(FAIL_EVENTS),
        State::Map(m) => {
            let (field, processor) = match (&m.item_processor, &m.iterator) {
                (Some(p), _) => ("ItemProcessor", p),
                (None, Some(p)) => ("Iterator", p),
                (None, None) => return Some(CONTAINER_EVENTS),
            };
            let body = sub_machine_cost(ctx, &format!("{ptr}/{field}"), processor);
            let Some(&items) = ctx.opts.map_item_bounds.get(name) else {
                ctx.warning(
                    "ASL_HISTORY_UNPROVEN",
                    ptr.to_string(),
                    format!("Map state {name:?} has no item bound, so its history cannot be bounded"),
                    format!("give an upper bound on its items: `tpf-sfn validate --map-item-bound {name:?}=N`"),
                );
                return None;
            };
            let once = CONTAINER_EVENTS
                .saturating_add(items.saturating_mul(ITERATION_EVENTS.saturating_add(body?)));
            Some(once.saturating_mul(attempts.saturating_add(1)))
        }
        State::Parallel(p) => {
            let mut once = Some(CONTAINER_EVENTS);
            for (b, branch) in p.branches.iter().enumerate() {
                let body = sub_machine_cost(ctx, &format!("{ptr}/Branches/{b}"), branch);
                once = match (once, body) {
                    (Some(o), Some(b)) => {
                        Some(o.saturating_add(ITERATION_EVENTS).saturating_add(b))
                    }
                    _ => None,
                };
            }
            Some(once?.saturating_mul(attempts.saturating_add(1)))
        }
    }
}

/// Heaviest path through a Parallel branch or Map processor. Loops there are not bounded.
fn sub_machine_cost(ctx: &mut Ctx<'_>, scope_ptr: &str, sub: &SubMachine) -> Option<u64> {
    let start = sub.states.get_index_of(&sub.start_at)?;
    let graph = Graph::new(&sub.states);
    let alive = graph.reachable(start, &|_| false);
    let mut weights = vec![0u64; graph.len()];
    let mut provable = true;
    for (i, (name, state)) in sub.states.iter().enumerate() {
        if alive.get(i).copied().unwrap_or(false) {
            match cost(ctx, &state_pointer(scope_ptr, name), name, state) {
                Some(w) => weights[i] = w,
                None => provable = false,
            }
        }
    }
    if let Some(scc) = graph.cyclic_components(&alive).first() {
        let at = scc
            .first()
            .and_then(|&v| sub.states.get_index(v))
            .map(|(n, _)| n.as_str())
            .unwrap_or("?");
        ctx.error(
            "ASL_HISTORY_UNBOUNDED",
            state_pointer(scope_ptr, at),
            format!("state {at:?} is on a loop inside a Parallel branch or Map processor; such loops are not bounded"),
            "move the loop to the top level as a counted loop, or remove it",
        );
        return None;
    }
    if !provable {
        return None;
    }
    graph
        .longest_from(&alive, &|_, _| true, &|v| {
            weights.get(v).copied().unwrap_or(0)
        })?
        .get(start)
        .copied()
}

struct LoopProof {
    guard: LoopGuard,
    fixed: u64,
    per_iteration: u64,
}

/// `(state index to point at, reason)` when the loop is not proven bounded.
type Unproven = (usize, String);

fn prove_loop(
    states: &indexmap::IndexMap<String, State>,
    graph: &Graph,
    alive: &[bool],
    start: usize,
    scc: &[usize],
    weight: &dyn Fn(usize) -> u64,
) -> Result<LoopProof, Unproven> {
    let mut in_scc = vec![false; graph.len()];
    for &v in scc {
        in_scc[v] = true;
    }
    let in_loop = |v: usize| in_scc.get(v).copied().unwrap_or(false);
    let first = scc.first().copied().unwrap_or(start);
    let mut last_reason: Unproven = (
        first,
        "no Choice state on it has a counter guard rule".to_string(),
    );
    for &g in scc {
        let Some((_, State::Choice(choice))) = states.get_index(g) else {
            continue;
        };
        let Some((counter, limit)) = guard_rule(choice.choices.as_slice(), states, &in_loop) else {
            continue;
        };
        match verify_guard(states, graph, alive, start, &in_loop, g, &counter, weight) {
            Ok((fixed, per_iteration)) => {
                let state = states
                    .get_index(g)
                    .map(|(n, _)| n.clone())
                    .unwrap_or_default();
                return Ok(LoopProof {
                    guard: LoopGuard {
                        state,
                        counter_path: counter,
                        limit,
                    },
                    fixed,
                    per_iteration,
                });
            }
            Err(reason) => last_reason = reason,
        }
    }
    Err(last_reason)
}

/// The first rule of a Choice that is `P >= N` (alone, or in an `And` whose other members
/// only assert P is present/numeric), provided it and every rule before it leave the loop.
fn guard_rule(
    rules: &[ChoiceRule],
    states: &indexmap::IndexMap<String, State>,
    in_loop: &dyn Fn(usize) -> bool,
) -> Option<(String, u64)> {
    for rule in rules {
        let leaves = rule
            .next
            .as_ref()
            .and_then(|n| states.get_index_of(n))
            .is_some_and(|t| !in_loop(t));
        if !leaves {
            return None;
        }
        if let Some(found) = counter_test(rule) {
            return Some(found);
        }
        if let Some(and) = &rule.and {
            let tests: Vec<(String, u64)> = and.iter().filter_map(counter_test).collect();
            if let [(p, n)] = tests.as_slice() {
                let others_harmless = and.iter().filter(|r| counter_test(r).is_none()).all(|r| {
                    r.and.is_none()
                        && r.or.is_none()
                        && r.not.is_none()
                        && r.variable.as_deref() == Some(p.as_str())
                        && r.comparison.len() == 1
                        && (r.comparison.get("IsPresent") == Some(&Value::Bool(true))
                            || r.comparison.get("IsNumeric") == Some(&Value::Bool(true)))
                });
                if others_harmless {
                    return Some((p.clone(), *n));
                }
            }
        }
    }
    None
}

pub(super) fn counter_test(rule: &ChoiceRule) -> Option<(String, u64)> {
    if rule.and.is_some() || rule.or.is_some() || rule.not.is_some() || rule.comparison.len() != 1 {
        return None;
    }
    let variable = rule.variable.as_ref()?;
    simple_segments(variable).filter(|s| !s.is_empty())?;
    let n = rule.comparison.get("NumericGreaterThanEquals")?.as_u64()?;
    Some((variable.clone(), n))
}

/// What a state does to the counter on its normal (non-Catch) exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Keep,
    /// Writes a non-negative literal.
    SetNonNegative,
    /// `P := States.MathAdd(P, k)`, k a positive integer.
    Increment,
    /// Anything else that may change, move or remove it.
    Clobber,
}

enum Target {
    Discard,
    At(Vec<String>),
    Unknown,
}

fn target(result_path: Option<&Value>) -> Target {
    match result_path {
        None => Target::At(Vec::new()),
        Some(Value::Null) => Target::Discard,
        Some(Value::String(s)) => simple_segments(s)
            .map(Target::At)
            .unwrap_or(Target::Unknown),
        Some(_) => Target::Unknown,
    }
}

fn is_identity(path: Option<&Value>) -> bool {
    match path {
        None => true,
        Some(Value::String(s)) => s == "$",
        Some(_) => false,
    }
}

/// Whether writing at `at` leaves the counter `p` alone.
fn disjoint(at: &[String], p: &[String]) -> bool {
    at.iter().zip(p).any(|(a, b)| a != b)
}

fn catcher_effect(result_path: Option<&Value>, p: &[String]) -> Effect {
    match target(result_path) {
        Target::Discard => Effect::Keep,
        Target::At(at) if disjoint(&at, p) => Effect::Keep,
        _ => Effect::Clobber,
    }
}

/// Where a template's `.$` expressions read from.
#[derive(Clone, Copy)]
enum Source {
    /// A Pass's Parameters: the state input (`reads_root`: the whole of it).
    Input { reads_root: bool },
    /// A Task's ResultSelector: the task result, which never holds the counter's old value.
    Result,
    /// A literal `Result`.
    Literal,
}

fn effect(state: &State, p: &[String]) -> Effect {
    let (input_path, output_path) = match state {
        State::Task(s) => (None, s.output_path.as_ref()),
        State::Pass(s) => (s.input_path.as_ref(), s.output_path.as_ref()),
        State::Map(s) => (None, s.output_path.as_ref()),
        State::Parallel(s) => (None, s.output_path.as_ref()),
        State::Choice(s) => (s.input_path.as_ref(), s.output_path.as_ref()),
        State::Wait(s) => (s.input_path.as_ref(), s.output_path.as_ref()),
        State::Succeed(s) => (s.input_path.as_ref(), s.output_path.as_ref()),
        State::Fail(_) => (None, None),
    };
    if !is_identity(output_path) {
        return Effect::Clobber;
    }
    let reads_root = is_identity(input_path);
    let (result_path, template, source) = match state {
        State::Task(s) => (
            s.result_path.as_ref(),
            s.result_selector.as_ref(),
            Source::Result,
        ),
        State::Map(s) => (s.result_path.as_ref(), None, Source::Literal),
        State::Parallel(s) => (s.result_path.as_ref(), None, Source::Literal),
        State::Pass(s) => match (&s.result, &s.parameters) {
            (Some(r), _) => (s.result_path.as_ref(), Some(r), Source::Literal),
            (None, Some(params)) => (
                s.result_path.as_ref(),
                Some(params),
                Source::Input { reads_root },
            ),
            (None, None) => {
                // A bare Pass copies its input to ResultPath; at `$` that is the identity.
                if is_identity(input_path) && is_identity(s.result_path.as_ref()) {
                    return Effect::Keep;
                }
                (s.result_path.as_ref(), None, Source::Literal)
            }
        },
        State::Choice(_) | State::Wait(_) | State::Succeed(_) | State::Fail(_) => {
            return if is_identity(input_path) {
                Effect::Keep
            } else {
                Effect::Clobber
            };
        }
    };
    let at = match target(result_path) {
        Target::Discard => return Effect::Keep,
        Target::Unknown => return Effect::Clobber,
        Target::At(at) => at,
    };
    if disjoint(&at, p) {
        return Effect::Keep;
    }
    let (Some(template), Some(rest)) = (template, p.get(at.len()..)) else {
        // Unknown result, or a write below the counter.
        return Effect::Clobber;
    };
    // Parameters read the InputPath-filtered input, so `MathAdd(P, 1)` only reads the counter
    // when the Pass keeps the whole input.
    written_value(template, source, rest, p)
}

/// Follows `rest` through a Pass template or a Task's ResultSelector to see what lands on the
/// counter.
fn written_value(template: &Value, source: Source, rest: &[String], p: &[String]) -> Effect {
    let dynamic = !matches!(source, Source::Literal);
    let Some((last, parents)) = rest.split_last() else {
        return non_negative(template);
    };
    let mut obj = template;
    for seg in parents {
        match obj.get(seg) {
            Some(child) if !(dynamic && obj.get(format!("{seg}.$")).is_some()) => obj = child,
            _ => return Effect::Clobber,
        }
    }
    if let Some(v) = obj.get(last.as_str()) {
        return non_negative(v);
    }
    if let Some(Value::String(expr)) = obj.get(format!("{last}.$")) {
        let increments = match source {
            Source::Input { reads_root } => reads_root && is_increment(expr, p),
            Source::Result | Source::Literal => false,
        };
        if increments {
            return Effect::Increment;
        }
    }
    Effect::Clobber
}

fn non_negative(v: &Value) -> Effect {
    match v.as_f64() {
        Some(n) if n >= 0.0 => Effect::SetNonNegative,
        _ => Effect::Clobber,
    }
}

fn is_increment(expr: &str, p: &[String]) -> bool {
    let Ok(call) = parse_intrinsic(expr) else {
        return false;
    };
    match call.args.as_slice() {
        [IntrinsicArg::Path(q), IntrinsicArg::Number(k)] => {
            call.name == "MathAdd"
                && simple_segments(q).as_deref() == Some(p)
                && *k >= 1.0
                && k.fract() == 0.0
        }
        _ => false,
    }
}

#[allow(clippy::too_many_arguments)]
fn verify_guard(
    states: &indexmap::IndexMap<String, State>,
    graph: &Graph,
    alive: &[bool],
    start: usize,
    in_loop: &dyn Fn(usize) -> bool,
    g: usize,
    counter: &str,
    weight: &dyn Fn(usize) -> u64,
) -> Result<(u64, u64), Unproven> {
    let name = |v: usize| states.get_index(v).map(|(n, _)| n.as_str()).unwrap_or("?");
    let p =
        simple_segments(counter).ok_or((g, format!("counter {counter:?} is not a simple path")))?;
    if in_loop(start) {
        return Err((start, "StartAt is inside the loop, so the counter's first value comes from the execution input".into()));
    }
    let n = graph.len();
    let loop_minus_g: Vec<bool> = (0..n).map(|v| in_loop(v) && v != g).collect();
    if graph.topo_order(&loop_minus_g, &|_, _| true).is_none() {
        return Err((
            g,
            format!("removing guard {:?} still leaves a cycle", name(g)),
        ));
    }
    let mut increments = vec![false; n];
    for v in (0..n).filter(|&v| in_loop(v)) {
        let Some((_, state)) = states.get_index(v) else {
            continue;
        };
        match effect(state, &p) {
            Effect::Keep => {}
            Effect::Increment => increments[v] = true,
            Effect::SetNonNegative | Effect::Clobber => {
                return Err((
                    v,
                    format!(
                        "state {:?} inside the loop may overwrite counter {counter}",
                        name(v)
                    ),
                ));
            }
        }
        for e in graph.edges.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if let (Some(i), true) = (e.catcher, in_loop(e.to)) {
                let rp = state.catchers().get(i).and_then(|c| c.result_path.as_ref());
                if catcher_effect(rp, &p) != Effect::Keep {
                    return Err((v, format!("Catch[{i}] of {:?} stays in the loop and may overwrite counter {counter}", name(v))));
                }
            }
        }
    }
    // Every cycle passes G exactly once (G's removal breaks them all); look for one that
    // returns to G without passing an increment.
    let blocked = |v: usize| !in_loop(v) || v == g || increments.get(v).copied().unwrap_or(false);
    let succ = |v: usize| graph.edges.get(v).map(Vec::as_slice).unwrap_or(&[]);
    for e in succ(g) {
        if e.to == g {
            return Err((g, "the guard transitions to itself".into()));
        }
        let seen = graph.reachable(e.to, &blocked);
        if let Some(v) = (0..n)
            .find(|&v| seen.get(v).copied().unwrap_or(false) && succ(v).iter().any(|e| e.to == g))
        {
            return Err((
                v,
                format!(
                    "a cycle through {:?} returns to the guard without incrementing {counter}",
                    name(v)
                ),
            ));
        }
    }
    // Counter ≥ 0 on every edge into the loop: a forward must-analysis over the acyclic part
    // before it.
    let outside: Vec<bool> = (0..n)
        .map(|v| alive.get(v).copied().unwrap_or(false) && !in_loop(v))
        .collect();
    let order = graph
        .topo_order(&outside, &|_, _| true)
        .ok_or((g, "another cycle outside the loop".to_string()))?;
    let mut known: Vec<Option<bool>> = vec![None; n];
    if let Some(k) = known.get_mut(start) {
        *k = Some(false);
    }
    let edge_value = |u: usize, e: &Edge, at_u: bool| -> bool {
        let Some((_, state)) = states.get_index(u) else {
            return false;
        };
        let eff = match e.catcher {
            Some(i) => catcher_effect(
                state.catchers().get(i).and_then(|c| c.result_path.as_ref()),
                &p,
            ),
            None => effect(state, &p),
        };
        match eff {
            Effect::SetNonNegative => true,
            Effect::Keep | Effect::Increment => at_u,
            Effect::Clobber => false,
        }
    };
    for &u in &order {
        let at_u = known.get(u).copied().flatten().unwrap_or(false);
        for e in succ(u) {
            let value = edge_value(u, e, at_u);
            if in_loop(e.to) {
                if !value {
                    return Err((u, format!("on the path through {:?} into the loop, counter {counter} is not set to a literal 0 first", name(u))));
                }
            } else if let Some(slot) = known.get_mut(e.to) {
                *slot = Some(slot.unwrap_or(true) && value);
            }
        }
    }
    // The bound's terms (see `HistoryAnalysis`).
    let all = |_: usize, _: &Edge| true;
    let to_g = {
        let order = graph
            .topo_order(alive, &|u, _| u != g)
            .ok_or((g, "unexpected cycle".to_string()))?;
        let mut dist: Vec<Option<u64>> = vec![None; n];
        for &v in order.iter().rev() {
            let d = if v == g {
                Some(0)
            } else {
                succ(v)
                    .iter()
                    .filter_map(|e| dist.get(e.to).copied().flatten())
                    .max()
                    .map(|t| weight(v).saturating_add(t))
            };
            if let Some(slot) = dist.get_mut(v) {
                *slot = d;
            }
        }
        dist
    };
    let prefix = to_g
        .get(start)
        .copied()
        .flatten()
        .ok_or((g, "the guard is not reachable".to_string()))?;
    let cycle_tail = succ(g)
        .iter()
        .filter(|e| in_loop(e.to))
        .filter_map(|e| to_g.get(e.to).copied().flatten())
        .max()
        .unwrap_or(0);
    let per_iteration = weight(g).saturating_add(cycle_tail);
    let suffix = graph
        .longest_from(alive, &|_, e| e.to != g, weight)
        .and_then(|best| best.get(g).copied())
        .ok_or((g, "unexpected cycle".to_string()))?;
    let without_g: Vec<bool> = (0..n)
        .map(|v| alive.get(v).copied().unwrap_or(false) && v != g)
        .collect();
    let bypass = graph
        .longest_from(&without_g, &all, weight)
        .and_then(|best| best.get(start).copied())
        .ok_or((g, "unexpected cycle".to_string()))?;
    let fixed = EXECUTION_EVENTS.saturating_add(prefix.saturating_add(suffix).max(bypass));
    Ok((fixed, per_iteration))
}
