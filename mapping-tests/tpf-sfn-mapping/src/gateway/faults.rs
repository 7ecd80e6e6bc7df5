//! TPF's fault points (`ProofFaultInjector`): each is armed to fire once or made persistent,
//! and fires where TPF's proof throws it. Firing answers the failure TPF's proof raises, an
//! exception of its own class, so a driver sees it as any other function error.

use std::collections::{BTreeMap, BTreeSet};

use tpf_wire::gateway::FunctionError;

/// The error type a fired fault answers with (TPF's proof throws its own exception).
pub const INJECTED_FAULT_TYPE: &str = "ProofInjectedFaultException";

/// TPF's fault points, by TPF's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultPoint {
    /// The ingress, before the provider's start.
    IngressBeforeProviderStart,
    /// The ingress, after the provider accepted the start: the answer is lost.
    IngressAfterProviderStart,
    /// SUBMIT, before TPF's `executePipelineAsync`.
    SubmitBeforeTpfCommit,
    /// SUBMIT, after TPF committed.
    SubmitAfterTpfCommit,
    /// REGISTER_CALLBACK and BIND_CALLBACK, before the row is written.
    BindBeforeProviderBinding,
    /// REGISTER_CALLBACK and BIND_CALLBACK, after the row is written.
    BindAfterProviderBinding,
    /// The work function, before the action: the message is delivered again.
    WorkBeforeAction,
    /// The work function, after the action committed and before the acknowledgement.
    WorkAfterAction,
    /// The transition worker, before the action: the request is delivered again.
    TransitionBeforeAction,
    /// The transition worker, after the action published its response and before the
    /// acknowledgement: the request is delivered again.
    TransitionAfterAction,
    /// The wake-up, before the callback send.
    WakeupBeforeProviderCallback,
    /// The wake-up, after the provider accepted the send: the answer is lost.
    WakeupAfterProviderCallback,
    /// The callback client, before the send: the provider throttles.
    CallbackApiThrottled,
    /// The history read after a refused send (TPF then treats the callback as closed).
    ProviderHistoryUnavailable,
    /// The pipeline's step fails (TPF arms it PERSISTENT).
    PipelineTransition,
}

impl FaultPoint {
    pub const ALL: [FaultPoint; 15] = [
        Self::IngressBeforeProviderStart,
        Self::IngressAfterProviderStart,
        Self::SubmitBeforeTpfCommit,
        Self::SubmitAfterTpfCommit,
        Self::BindBeforeProviderBinding,
        Self::BindAfterProviderBinding,
        Self::WorkBeforeAction,
        Self::WorkAfterAction,
        Self::TransitionBeforeAction,
        Self::TransitionAfterAction,
        Self::WakeupBeforeProviderCallback,
        Self::WakeupAfterProviderCallback,
        Self::CallbackApiThrottled,
        Self::ProviderHistoryUnavailable,
        Self::PipelineTransition,
    ];

    /// TPF's spelling of the point.
    pub fn name(self) -> &'static str {
        match self {
            Self::IngressBeforeProviderStart => "ingress-before-provider-start",
            Self::IngressAfterProviderStart => "ingress-after-provider-start",
            Self::SubmitBeforeTpfCommit => "submit-before-tpf-commit",
            Self::SubmitAfterTpfCommit => "submit-after-tpf-commit",
            Self::BindBeforeProviderBinding => "bind-before-provider-binding",
            Self::BindAfterProviderBinding => "bind-after-provider-binding",
            Self::WorkBeforeAction => "work-before-action",
            Self::WorkAfterAction => "work-after-action",
            Self::TransitionBeforeAction => "transition-before-action",
            Self::TransitionAfterAction => "transition-after-action",
            Self::WakeupBeforeProviderCallback => "wakeup-before-provider-callback",
            Self::WakeupAfterProviderCallback => "wakeup-after-provider-callback",
            Self::CallbackApiThrottled => "callback-api-throttled",
            Self::ProviderHistoryUnavailable => "provider-history-unavailable",
            Self::PipelineTransition => "pipeline-transition",
        }
    }

    /// The failure a fired point answers.
    pub fn error(self) -> FunctionError {
        FunctionError {
            error_message: format!("injected fault {}", self.name()),
            error_type: INJECTED_FAULT_TYPE.to_owned(),
        }
    }
}

/// The armed and persistent points, and what fired.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// `ARMED`: fires this many more times.
    armed: BTreeMap<FaultPoint, u32>,
    /// `PERSISTENT`: fires every time until cleared.
    persistent: BTreeSet<FaultPoint>,
    fired: Vec<(i64, FaultPoint)>,
}

impl Faults {
    /// Arms `point` to fire once more.
    pub fn arm(&mut self, point: FaultPoint) {
        *self.armed.entry(point).or_default() += 1;
    }

    pub fn persist(&mut self, point: FaultPoint) {
        self.persistent.insert(point);
    }

    pub fn clear(&mut self, point: FaultPoint) {
        self.persistent.remove(&point);
        self.armed.remove(&point);
    }

    pub fn is_persistent(&self, point: FaultPoint) -> bool {
        self.persistent.contains(&point)
    }

    /// Whether `point` fires now; an armed point is consumed.
    pub fn fire(&mut self, point: FaultPoint, at_ms: i64) -> bool {
        let fires = if self.persistent.contains(&point) {
            true
        } else if let Some(n) = self.armed.get_mut(&point) {
            *n -= 1;
            if *n == 0 {
                self.armed.remove(&point);
            }
            true
        } else {
            false
        };
        if fires {
            self.fired.push((at_ms, point));
        }
        fires
    }

    /// Every firing, in order.
    pub fn fired(&self) -> &[(i64, FaultPoint)] {
        &self.fired
    }

    /// How often `point` fired.
    pub fn count(&self, point: FaultPoint) -> usize {
        self.fired.iter().filter(|(_, p)| *p == point).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armed_points_fire_as_often_as_armed_and_persistent_ones_until_cleared() {
        let mut f = Faults::default();
        let p = FaultPoint::SubmitBeforeTpfCommit;
        assert!(!f.fire(p, 1));
        f.arm(p);
        f.arm(p);
        assert!(f.fire(p, 2) && f.fire(p, 3) && !f.fire(p, 4));
        let q = FaultPoint::CallbackApiThrottled;
        f.persist(q);
        assert!((0..5).all(|t| f.fire(q, t)));
        f.clear(q);
        assert!(!f.fire(q, 9));
        assert_eq!((f.count(p), f.count(q)), (2, 5));
        assert_eq!(f.fired()[0], (2, p));
    }

    #[test]
    fn points_carry_tpfs_names_and_fail_with_tpfs_proof_exception() {
        let names: Vec<&str> = FaultPoint::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names[2], "submit-before-tpf-commit");
        assert_eq!(names[8], "transition-before-action");
        assert_eq!(names[14], "pipeline-transition");
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), FaultPoint::ALL.len());
        let e = FaultPoint::WorkAfterAction.error();
        assert_eq!(e.error_type, INJECTED_FAULT_TYPE);
        assert!(e.error_message.ends_with("work-after-action"));
    }
}
