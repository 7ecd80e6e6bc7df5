//! Hard budgets for one scenario run, so that any driver — a user's hand-edited one included —
//! gets a verdict in bounded time and memory. A driver that asks TPF again without sleeping
//! runs at one virtual instant for ever (each generation stops at its history cap, then
//! hands over to the next at the same instant), so neither the horizon nor the per-execution
//! cap ends the run; the engine's event budget does, and the checks then name what went wrong.
//!
//! Every figure is derived from what the scenario can legitimately make the driver do: a few
//! calls per park, per item, per scripted worker attempt (retries and rollovers), one per minute
//! of the horizon for the slow re-checks, times the deliveries each call's faults add. The
//! compiled drivers stay well inside (`mapping-tests/tpf-sfn-mapping/tests/matrix.rs` runs every one); the
//! budget is not a performance target, only a fence.

use serde::Serialize;
use tpf_sfn_compiler::plan::DriverPlan;

use super::model::Scenario;
use crate::subject::ITEMS_PER_STREAM;

/// History events a paced driver writes per action call, with room to spare: the parked
/// happy path writes 29 for 2 calls, a rollover iteration about 15.
const EVENTS_PER_CALL: u64 = 25;
/// History events of one sweeper execution with a few due executions to look at.
const EVENTS_PER_SWEEP: u64 = 60;
/// State transitions per action call, likewise (7 for 2 calls on the happy path).
const TRANSITIONS_PER_CALL: u64 = 12;
/// Driver generations of one TPF execution that may start within [`GENERATION_WINDOW_MS`]:
/// a hand-over, a re-drive and a sweeper's recovery can come close together, but never more.
pub const GENERATIONS_PER_WINDOW: usize = 3;
pub const GENERATION_WINDOW_MS: i64 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// Action calls (deliveries) of the first execution.
    pub action_calls: u64,
    /// Driver state transitions of the first execution.
    pub state_transitions: u64,
    /// History events of every execution in the world; the engine stops at this many.
    pub events: u64,
}

/// Calls the scenario can justify: the work it scripts, then the horizon's slow re-checks.
fn work_units(plan: &DriverPlan, scenario: &Scenario) -> u64 {
    let parks: u64 = plan
        .awaits
        .iter()
        .map(|a| {
            if a.itemized {
                1 + u64::from(ITEMS_PER_STREAM)
            } else {
                1
            }
        })
        .sum();
    // A scripted step inside an item continuation runs once per item.
    let per_script = if plan.awaits.iter().any(|a| a.itemized) {
        u64::from(ITEMS_PER_STREAM)
    } else {
        1
    };
    let attempts: u64 = scenario
        .worker
        .iter()
        .map(|w| w.outcomes.len() as u64)
        .sum::<u64>()
        * per_script;
    1 + parks + attempts + scenario.actions.len() as u64
}

/// The budgets of `scenario` for a release with `plan`: they follow from what the scenario
/// scripts and the plan's awaits, whatever the engine.
pub fn for_scenario(plan: &DriverPlan, scenario: &Scenario) -> Budget {
    let deliveries = 1 + scenario.faults.per_call.len() as u64;
    let action_calls = (2 * work_units(plan, scenario) + 20 + scenario.horizon_seconds / 60)
        .saturating_mul(deliveries)
        .saturating_add(scenario.faults.outage.map_or(0, |o| u64::from(o.failures)));
    // The sweeper's own executions write history too, whatever the driver does.
    let sweeps = scenario
        .sweeper_every_seconds
        .map_or(0, |every| scenario.horizon_seconds / every.max(1) + 1);
    Budget {
        action_calls,
        state_transitions: action_calls.saturating_mul(TRANSITIONS_PER_CALL),
        events: action_calls
            .saturating_mul(EVENTS_PER_CALL)
            .saturating_add(sweeps.saturating_mul(EVENTS_PER_SWEEP)),
    }
}
