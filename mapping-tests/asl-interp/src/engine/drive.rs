//! Driving virtual time: running what is runnable now, firing the next timer, advancing the
//! clock to an instant or until nothing is left to do.

use crate::handler::TaskHandler;

use super::{Engine, ExecutionStatus};

impl Engine {
    /// The earliest pending timer.
    pub fn next_timer(&self) -> Option<i64> {
        self.timers.peek().map(|t| t.at)
    }

    /// Runs everything runnable at the current virtual time, including timers due now.
    pub fn run_until_idle(&mut self, handler: &mut dyn TaskHandler) {
        loop {
            if self.budget_spent() {
                return;
            }
            while let Some((e, t, epoch)) = self.queue.pop_front() {
                let x = &self.execs[e];
                if x.status != ExecutionStatus::Running || x.threads[t].epoch != epoch {
                    continue;
                }
                self.run_thread(e, t, handler);
                self.after_external(e);
                if self.budget_spent() {
                    return;
                }
            }
            self.prune_timers();
            match self.timers.peek() {
                Some(tm) if tm.at <= self.now_ms() => {
                    if let Some(tm) = self.timers.pop() {
                        self.fire(tm.kind);
                    }
                }
                _ => break,
            }
        }
        self.prune_timers();
    }

    /// Jumps to the next timer, fires everything due then, and runs to idle. Returns the new
    /// time, or `None` when nothing is scheduled.
    pub fn step_timer(&mut self, handler: &mut dyn TaskHandler) -> Option<i64> {
        self.run_until_idle(handler);
        let at = self.next_timer()?;
        self.clock.advance_to(at);
        self.run_until_idle(handler);
        Some(self.now_ms())
    }

    /// Fires every timer due up to `t` in order, then leaves the clock at `t`.
    pub fn advance_to(&mut self, t: i64, handler: &mut dyn TaskHandler) {
        self.run_until_idle(handler);
        while let Some(at) = self.next_timer().filter(|&at| at <= t) {
            self.clock.advance_to(at);
            self.run_until_idle(handler);
        }
        self.clock.advance_to(t);
        self.run_until_idle(handler);
    }

    /// Steps timers until none is left or the next lies past `deadline`. Returns true when
    /// nothing is scheduled any more (every execution is closed or parked on a token).
    pub fn advance_until_idle_or(&mut self, deadline: i64, handler: &mut dyn TaskHandler) -> bool {
        self.run_until_idle(handler);
        while let Some(at) = self.next_timer() {
            if at > deadline {
                return false;
            }
            self.clock.advance_to(at);
            self.run_until_idle(handler);
        }
        true
    }
}
