//! "Paced by TPF": the driver asks TPF no faster than TPF's answers allow, and never sleeps
//! past what they allow. The other families say *where* the driver goes after an answer; these
//! say *when* it comes back: a driver that re-asks at once spends a budget of calls on nothing
//! (and, unbounded, never gives the gate a verdict), one that sleeps for years strands the
//! execution while TPF waits for it.

use super::run::{driver_executions, Run};
use crate::harness::trace::clock;
use crate::invariants::common;
use crate::invariants::{v, Violation};

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
    out.extend(common::calls_within_budget(m.action_calls, b.action_calls));
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

pub(super) fn calls_paced(run: &Run) -> Vec<Violation> {
    common::calls_paced(&run.world.trace)
}

pub(super) fn generations_paced(run: &Run) -> Vec<Violation> {
    let w = &run.world;
    common::generations_paced(&w.trace, &|exec| {
        driver_executions(w, exec)
            .iter()
            .filter_map(|arn| w.engine.describe_execution(arn).ok().map(|d| d.start_ms))
            .collect()
    })
}
