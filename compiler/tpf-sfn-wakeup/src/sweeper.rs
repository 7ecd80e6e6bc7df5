//! The sweeper's decision per due execution, as one function: what the Step Functions sweeper
//! machine decides in its states (`templates/sweeper.asl.json.hbs`), for a sweeper that is a
//! plain scheduled function (the Lambda durable functions backend's), which calls TPF's
//! `sweep-once` for its release and acts on each due execution it lists.

use crate::bridge::TokenRow;
use tpf_wire::action::DueExecution;
use tpf_wire::Identity;

/// What the sweeper does about one due execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepAction {
    /// Pinned to another release: that release's sweeper handles it.
    OtherRelease,
    /// A live driver exists and is awake, or wakes on its own timer.
    Live,
    /// The live driver is parked and its wakeup was lost: complete its callback.
    Wake { callback_id: String },
    /// No live driver: start a recovery lineage, named from TPF's record version so that a
    /// repeated sweep finds the one it started.
    Recover { lineage: String },
}

/// Whether the due execution is pinned to this release (the sweeper's first choice; a caller
/// may ask it before reading anything for the rest).
pub fn pinned_here(release: &Identity, due: &DueExecution) -> bool {
    due.pipeline_id == release.pipeline_id && due.release_version == release.release_version
}

/// The Step Functions sweeper's choices, in its order: the release check, the live-driver
/// pointer, whether that driver runs, and whether the parked token is that driver's.
pub fn decide(
    release: &Identity,
    due: &DueExecution,
    pointer: Option<&str>,
    pointer_running: bool,
    token: Option<&TokenRow>,
) -> SweepAction {
    if !pinned_here(release, due) {
        return SweepAction::OtherRelease;
    }
    match pointer {
        Some(p) if pointer_running => match token {
            Some(t) if t.execution_arn == p => SweepAction::Wake {
                callback_id: t.task_token.clone(),
            },
            _ => SweepAction::Live,
        },
        _ => SweepAction::Recover {
            lineage: format!("{}-s{}", due.execution_id, due.version),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpf_wire::records::ExecutionStatus;

    fn due(release: &str) -> DueExecution {
        DueExecution {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            pipeline_id: "p".into(),
            contract_version: "1".into(),
            release_version: release.into(),
            status: ExecutionStatus::WaitingExternal,
            version: 7,
            next_due_at: None,
        }
    }

    fn token(arn: &str) -> TokenRow {
        TokenRow {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            task_token: "cb".into(),
            unit_id: "u".into(),
            execution_arn: arn.into(),
        }
    }

    #[test]
    fn each_branch_of_the_sweeper_machine() {
        let id = Identity {
            pipeline_id: "p".into(),
            contract_version: "1".into(),
            release_version: "r1".into(),
        };
        let recover = SweepAction::Recover {
            lineage: "e-s7".into(),
        };
        assert_eq!(
            decide(&id, &due("r2"), None, false, None),
            SweepAction::OtherRelease
        );
        assert_eq!(decide(&id, &due("r1"), None, false, None), recover);
        assert_eq!(
            decide(&id, &due("r1"), Some("a"), false, Some(&token("a"))),
            recover
        );
        assert_eq!(
            decide(&id, &due("r1"), Some("a"), true, Some(&token("a"))),
            SweepAction::Wake {
                callback_id: "cb".into()
            }
        );
        assert_eq!(
            decide(&id, &due("r1"), Some("a"), true, Some(&token("b"))),
            SweepAction::Live
        );
        assert_eq!(
            decide(&id, &due("r1"), Some("a"), true, None),
            SweepAction::Live
        );
    }
}
