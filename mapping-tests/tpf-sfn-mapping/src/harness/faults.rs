//! Transport faults injected on action calls, per binding, deterministically.

use serde::Deserialize;

/// What goes wrong with one delivery of an action call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The call never reaches TPF: a 503 (http), a Lambda service error, or a relay failure.
    Unavailable,
    /// TPF applies the call but the answer is lost; the task times out and is retried.
    LostReply,
    /// The call is delivered twice (network or SQS at-least-once); TPF sees both.
    Duplicate,
}

/// Which calls get which faults. `per_call` faults hit every distinct call (by idempotency
/// key), in order, before it is let through; `first_calls` hit only the first N calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct FaultPlan {
    pub per_call: Vec<Fault>,
    /// Consecutive `Unavailable` answers for the calls after the first `after_calls` ones:
    /// enough of them exhausts the driver's transport retries.
    pub outage: Option<Outage>,
    /// Lose the bridge's wakeups (the sweeper or the deadline must recover them).
    pub lose_wakeups: bool,
    /// The bridge misses re-drive records, so no re-drive generation starts (a broken bridge).
    pub lose_redrive_starts: bool,
    /// The first N wakeup-token registrations fail with an error no retrier covers (the
    /// wakeup table missing or the driver's role denied): the driver must re-check TPF.
    pub fail_token_registrations: u32,
    /// Lambda durable functions only (Step Functions has no such failure): the driver function
    /// dies right after each of the first N action calls reached TPF, before the call's step is
    /// checkpointed, so the next invocation runs the step again (steps are at least once).
    pub crash_after_calls: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Outage {
    pub after_calls: u32,
    pub failures: u32,
}

/// Tracks how many times each call has been faulted.
#[derive(Debug, Clone, Default)]
pub struct FaultState {
    pub plan: FaultPlan,
    seen: std::collections::BTreeMap<String, usize>,
    deliveries: u32,
    outage_used: u32,
    registrations_failed: u32,
    crashes: u32,
}

impl FaultState {
    pub fn new(plan: FaultPlan) -> Self {
        FaultState {
            plan,
            ..FaultState::default()
        }
    }

    /// Whether the next wakeup-token registration fails.
    pub fn next_registration_fails(&mut self) -> bool {
        let fails = self.registrations_failed < self.plan.fail_token_registrations;
        self.registrations_failed += u32::from(fails);
        fails
    }

    /// Whether the function dies after the call it just delivered.
    pub fn next_call_crashes(&mut self) -> bool {
        let crashes = self.crashes < self.plan.crash_after_calls;
        self.crashes += u32::from(crashes);
        crashes
    }

    /// The fault for the next delivery of the call with this key, if any.
    pub fn next(&mut self, key: &str) -> Option<Fault> {
        self.deliveries += 1;
        if let Some(o) = self.plan.outage {
            if self.deliveries > o.after_calls && self.outage_used < o.failures {
                self.outage_used += 1;
                return Some(Fault::Unavailable);
            }
        }
        let n = self.seen.entry(key.to_string()).or_insert(0);
        let fault = self.plan.per_call.get(*n).copied();
        *n += 1;
        fault
    }
}
