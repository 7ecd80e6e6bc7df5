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
    pub const ALL: [FaultPoint; 13] = [
        Self::IngressBeforeProviderStart,
        Self::IngressAfterProviderStart,
        Self::SubmitBeforeTpfCommit,
        Self::SubmitAfterTpfCommit,
        Self::BindBeforeProviderBinding,
        Self::BindAfterProviderBinding,
        Self::WorkBeforeAction,
        Self::WorkAfterAction,
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
