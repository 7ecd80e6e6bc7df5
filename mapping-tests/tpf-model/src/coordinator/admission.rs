//! TPF's work-function admission (`QueueAsyncSegmentPipeline.process`, steps 1 and 2): before
//! it claims anything, the work function asks its transition executor for a slot
//! (`worker.max-in-flight`) and the control-plane admission policy for the tenant
//! (`LocalControlPlaneAdmissionPolicy`, operation `PROCESS_WORK_ITEM`). A decline claims no
//! lease and writes no row: a saturated worker or a saturated tenant quota sends the item again
//! after `worker.saturated-delay`; a tenant the policy refuses is dropped with a warning.
//!
//! The model runs one item at a time, so how many transitions are in flight is the caller's to
//! say ([`WorkerLoad`]): a world injects a saturated worker or tenant as a fault.

use std::borrow::BorrowMut;
use std::collections::{BTreeMap, BTreeSet};

use tpf_wire::java_error::JavaError;
use tpf_wire::records::ExecutionRecord;

use super::{Coordinator, LocalControlPlane, WorkItem};
use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};

/// TPF's admission settings, with TPF's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionPolicy {
    /// `worker.max-in-flight`: transitions one work function runs at once.
    pub worker_max_in_flight: u32,
    /// `worker.saturated-delay`: how long a declined item waits before it is delivered again.
    pub saturated_delay_ms: i64,
    /// `quotas.max-in-flight-transitions-per-tenant`; 0 is unlimited.
    pub tenant_max_in_flight: u32,
    /// `tenancy.allowed-tenants`; empty allows every tenant.
    pub allowed_tenants: BTreeSet<String>,
    /// `tenancy.require-explicit-tenant`.
    pub require_explicit_tenant: bool,
}

impl Default for AdmissionPolicy {
    fn default() -> Self {
        Self {
            worker_max_in_flight: 64,
            saturated_delay_ms: 1_000,
            tenant_max_in_flight: 0,
            allowed_tenants: BTreeSet::new(),
            require_explicit_tenant: false,
        }
    }
}

/// What is in flight when an item arrives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerLoad {
    /// Transitions this work function is running.
    pub in_flight: u32,
    /// Transitions in flight per tenant, across workers.
    pub tenant_in_flight: BTreeMap<String, u32>,
}

/// Why the policy declined an item, by TPF's denial names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// The transition executor has no free slot.
    WorkerSaturated,
    TenantRequired,
    TenantNotAllowed,
    TenantTransitionQuotaSaturated,
}

impl Denial {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkerSaturated => "WORKER_SATURATED",
            Self::TenantRequired => "TENANT_REQUIRED",
            Self::TenantNotAllowed => "TENANT_NOT_ALLOWED",
            Self::TenantTransitionQuotaSaturated => "TENANT_TRANSITION_QUOTA_SATURATED",
        }
    }
}

/// The work function's decision on one delivered item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Claim and run it.
    Admitted,
    /// Send it again after `delay_ms`; nothing was claimed or written.
    Requeue { denial: Denial, delay_ms: i64 },
    /// Acknowledge it without running it; nothing was claimed or written.
    Drop { denial: Denial },
}

impl AdmissionPolicy {
    /// TPF's order: the executor's slot first, then the tenant policy.
    pub fn admit(&self, tenant_id: &str, load: &WorkerLoad) -> Admission {
        let requeue = |denial| Admission::Requeue {
            denial,
            delay_ms: self.saturated_delay_ms.max(0),
        };
        if load.in_flight >= self.worker_max_in_flight {
            return requeue(Denial::WorkerSaturated);
        }
        if tenant_id.trim().is_empty() {
            if self.require_explicit_tenant {
                return Admission::Drop {
                    denial: Denial::TenantRequired,
                };
            }
        } else if !self.allowed_tenants.is_empty() && !self.allowed_tenants.contains(tenant_id) {
            return Admission::Drop {
                denial: Denial::TenantNotAllowed,
            };
        }
        let tenant_load = load.tenant_in_flight.get(tenant_id).copied().unwrap_or(0);
        if self.tenant_max_in_flight > 0 && tenant_load >= self.tenant_max_in_flight {
            return requeue(Denial::TenantTransitionQuotaSaturated);
        }
        Admission::Admitted
    }
}

/// What TPF's work function did with one delivered item.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivered {
    /// Admitted: claimed (or refused by the claim) and run; the record it left behind.
    Ran(Box<ExecutionRecord>),
    /// Declined before the claim: nothing read or written.
    Declined(Admission),
}

impl<S, C> LocalControlPlane<S, C>
where
    S: ExecutionStore + AwaitStore + ReleaseRegistry,
    C: BorrowMut<Coordinator<S>>,
{
    /// TPF's work function on one delivered item with `load` in flight: the coordinator's
    /// admission policy first, then the claim and the run.
    pub fn deliver_work_item(
        &mut self,
        item: &WorkItem,
        load: &WorkerLoad,
        now_ms: i64,
    ) -> Result<Delivered, JavaError> {
        let policy = &self.coordinator.borrow().config().admission;
        match policy.admit(&item.tenant_id, load) {
            Admission::Admitted => self
                .run_work_item(item, now_ms)
                .map(|r| Delivered::Ran(Box::new(r))),
            declined => Ok(Delivered::Declined(declined)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(in_flight: u32, tenant: u32) -> WorkerLoad {
        WorkerLoad {
            in_flight,
            tenant_in_flight: BTreeMap::from([("t1".to_owned(), tenant)]),
        }
    }

    #[test]
    fn tpfs_defaults_admit_until_the_executor_is_full() {
        let p = AdmissionPolicy::default();
        assert_eq!(p.admit("t1", &load(63, 1_000)), Admission::Admitted);
        assert_eq!(
            p.admit("t1", &load(64, 0)),
            Admission::Requeue {
                denial: Denial::WorkerSaturated,
                delay_ms: 1_000
            }
        );
    }

    #[test]
    fn a_saturated_tenant_quota_requeues_and_a_refused_tenant_is_dropped() {
        let p = AdmissionPolicy {
            tenant_max_in_flight: 2,
            allowed_tenants: BTreeSet::from(["t1".to_owned()]),
            ..AdmissionPolicy::default()
        };
        assert_eq!(p.admit("t1", &load(0, 1)), Admission::Admitted);
        assert_eq!(
            p.admit("t1", &load(0, 2)),
            Admission::Requeue {
                denial: Denial::TenantTransitionQuotaSaturated,
                delay_ms: 1_000
            }
        );
        assert_eq!(
            p.admit("t2", &load(0, 0)),
            Admission::Drop {
                denial: Denial::TenantNotAllowed
            }
        );
    }

    #[test]
    fn a_blank_tenant_is_dropped_only_when_an_explicit_one_is_required() {
        let strict = AdmissionPolicy {
            require_explicit_tenant: true,
            ..AdmissionPolicy::default()
        };
        assert_eq!(
            strict.admit(" ", &WorkerLoad::default()),
            Admission::Drop {
                denial: Denial::TenantRequired
            }
        );
        assert_eq!(
            AdmissionPolicy::default().admit(" ", &WorkerLoad::default()),
            Admission::Admitted
        );
    }
}
