//! The one table of named checks every backend proves. Names, invariants and their order live
//! here only; a backend supplies its reading of each check (a function over its run), chosen by
//! an exhaustive `match` on [`CheckId`], so a check added here does not compile until every
//! backend answers it.

/// Which check: the key a backend's reading is chosen by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckId {
    TransportOnlyRetries,
    WritesOnlyTheWakeupTable,
    RoutesFollowTpfOutcome,
    RespectsTpfDueTime,
    DriverEndsAsTpfEnds,
    SingleLiveGeneration,
    ParksWithoutPolling,
    ResumeGoesThroughTpf,
    OneResumePerPark,
    CallsCarryPinnedIdentity,
    RedriveContinuesSameExecution,
    IdempotencyKeysAndSingleCommits,
    HistoryWithinProvenBound,
    DefinitionWithinLimits,
    RunWithinBudget,
    CallsPacedByTpf,
    GenerationsPaced,
    LeaseWaitBounded,
    RecheckWaitBounded,
}

/// One named check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    pub id: CheckId,
    /// The name violations and reports carry.
    pub name: &'static str,
    /// The invariant it proves.
    pub invariant: &'static str,
    /// What must hold, whatever the engine.
    pub doc: &'static str,
}

const fn check(
    id: CheckId,
    name: &'static str,
    invariant: &'static str,
    doc: &'static str,
) -> Check {
    Check {
        id,
        name,
        invariant,
        doc,
    }
}

const AUTHORITATIVE: &str = "TPF is authoritative";
const AWAIT: &str = "await";
const PACED: &str = "paced by TPF";

/// Every check, in the order a run's violations are reported.
pub const CHECKS: &[Check] = &[
    check(
        CheckId::TransportOnlyRetries,
        "transport-only-retries",
        AUTHORITATIVE,
        "the driver retries a call only when it did not get TPF's answer: TPF owns retries and backoff",
    ),
    check(
        CheckId::WritesOnlyTheWakeupTable,
        "writes-only-the-wakeup-table",
        AUTHORITATIVE,
        "the driver writes the adapter's wakeup table and nothing else, never TPF's records",
    ),
    check(
        CheckId::RoutesFollowTpfOutcome,
        "routes-follow-tpf-outcome",
        AUTHORITATIVE,
        "what the driver does after an answer is what that answer says",
    ),
    check(
        CheckId::RespectsTpfDueTime,
        "respects-tpf-due-time",
        AUTHORITATIVE,
        "no new call before the nextDueAt TPF named",
    ),
    check(
        CheckId::DriverEndsAsTpfEnds,
        "driver-ends-as-tpf-ends",
        AUTHORITATIVE,
        "a driver ends in success only while TPF's record succeeded",
    ),
    check(
        CheckId::SingleLiveGeneration,
        "single-live-generation",
        "execution identity and idempotent start",
        "one live driver generation per TPF execution, but during a hand-over",
    ),
    check(
        CheckId::ParksWithoutPolling,
        "parks-without-polling",
        AWAIT,
        "a parked driver does nothing until it is woken or its deadline passes",
    ),
    check(
        CheckId::ResumeGoesThroughTpf,
        "resume-goes-through-tpf",
        AWAIT,
        "after a park the next decision comes from a call to TPF: a wakeup is only a handle",
    ),
    check(
        CheckId::OneResumePerPark,
        "one-resume-per-park",
        AWAIT,
        "a driver is woken at most once per park TPF made",
    ),
    check(
        CheckId::CallsCarryPinnedIdentity,
        "calls-carry-pinned-identity",
        "release pinning",
        "every call carries the identity the execution is pinned to, from that release's driver",
    ),
    check(
        CheckId::RedriveContinuesSameExecution,
        "redrive-continues-same-execution",
        "re-drive",
        "a re-drive starts the execution's re-drive lineage on its own release; TPF creates it once",
    ),
    check(
        CheckId::IdempotencyKeysAndSingleCommits,
        "idempotency-keys-and-single-commits",
        "at-least-once with idempotency keys",
        "every call has a well-formed key of its own, and TPF commits each version once",
    ),
    check(
        CheckId::HistoryWithinProvenBound,
        "history-within-proven-bound",
        "bounded history",
        "no generation writes more history than its proven bound, nor reaches the engine's cap",
    ),
    check(
        CheckId::DefinitionWithinLimits,
        "definition-within-limits",
        "limits checked at compile time",
        "the driver passes the backend's static checks",
    ),
    check(
        CheckId::RunWithinBudget,
        "run-within-budget",
        PACED,
        "the run stays within the calls and events its scenario can justify",
    ),
    check(
        CheckId::CallsPacedByTpf,
        "calls-paced-by-tpf",
        PACED,
        "no new call within a second of one with the same answer",
    ),
    check(
        CheckId::GenerationsPaced,
        "generations-paced",
        PACED,
        "no more generations per minute than hand-overs, re-drives and recoveries explain",
    ),
    check(
        CheckId::LeaseWaitBounded,
        "lease-wait-bounded",
        PACED,
        "after another claimant's lease, the re-ask comes after a second and by the lease's end",
    ),
    check(
        CheckId::RecheckWaitBounded,
        "recheck-wait-bounded",
        PACED,
        "after a failed wakeup registration, the re-check comes after a second and in time",
    ),
];

impl CheckId {
    /// This check's row of [`CHECKS`].
    pub fn check(self) -> &'static Check {
        CHECKS
            .iter()
            .find(|c| c.id == self)
            .expect("every CheckId has its row in CHECKS")
    }

    pub fn name(self) -> &'static str {
        self.check().name
    }
}

#[cfg(test)]
mod tests {
    use super::CHECKS;

    #[test]
    fn every_check_has_one_row_and_a_unique_name() {
        for (i, c) in CHECKS.iter().enumerate() {
            assert!(CHECKS[i + 1..]
                .iter()
                .all(|o| o.id != c.id && o.name != c.name));
            assert_eq!(c.id.name(), c.name);
        }
        assert_eq!(CHECKS.len(), 19);
    }
}
