//! The wakeup bridge's decisions, written once.
//!
//! The bridge turns changes of TPF's records, and registrations of wakeup tokens, into driver
//! starts and wakeups. Every new execution record gets a driver lineage on its pinned release's
//! machine, and that includes the child executions of an itemized await's items
//! (`ItemContinuationKey`, an execution key ending `:await-item:<unit>:<item>`): each item's
//! continuation is a durable work item its own driver runs through `process-work-item`, retries
//! included (`docs/runtime.md`, "Item continuations"). Against a TPF that still runs
//! continuations in process the child is already SUCCEEDED when its driver first asks, and that
//! driver ends after one call. This module is the pure decision: an event in, the actions to take out.
//! The mapping-test harness feeds it TPF's transition log; the adapter's bridge feeds it
//! DynamoDB stream records. Both execute the actions against a Step Functions API and treat
//! "already done" answers (`ExecutionAlreadyExists`, `InvalidToken`, `TaskTimedOut`) as success,
//! which is what makes replaying an event harmless.

use serde_json::{json, Value};
use tpf_wire::records::ExecutionStatus;

/// The slice of TPF's `ExecutionRecord` the bridge reads (stream images carry more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordImage {
    pub tenant_id: String,
    pub execution_id: String,
    /// The pinned release: the bridge starts that release's driver machine, never the active one.
    pub pipeline_id: String,
    pub release_version: String,
    pub status: String,
    pub version: i64,
    pub await_unit_id: Option<String>,
    pub last_transition_key: Option<String>,
}

/// A row of the adapter-owned wakeup table (`sk = "wakeup"`): one parked driver's token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub tenant_id: String,
    pub execution_id: String,
    pub task_token: String,
    pub unit_id: String,
    pub execution_arn: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgeEvent {
    /// A TPF execution record was written. `old` is `None` for a new record.
    RecordChanged {
        old: Option<RecordImage>,
        new: RecordImage,
    },
    /// A driver registered a wakeup token while parking. `record` is TPF's record as read right
    /// after the token arrived (`None` if it no longer exists).
    TokenRegistered {
        token: TokenRow,
        record: Option<RecordImage>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum BridgeAction {
    /// Start a driver lineage on the pinned release's machine: execution name = `lineage`,
    /// generation 0.
    StartDriver {
        tenant_id: String,
        execution_id: String,
        pipeline_id: String,
        release_version: String,
        lineage: String,
    },
    /// Wake a parked driver; it then asks TPF what to do.
    Wake { task_token: String, output: Value },
}

impl BridgeAction {
    /// The driver input for a `StartDriver`.
    pub fn driver_input(tenant_id: &str, execution_id: &str, lineage: &str) -> Value {
        json!({ "tenantId": tenant_id, "executionId": execution_id, "lineage": lineage, "generation": 0 })
    }
}

/// The engine a parked driver runs on, read from its token row's `execution_arn`: what the
/// bridge answers a wake with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeEngine {
    /// A Step Functions execution (`arn:<partition>:states:...`): `SendTaskSuccess`.
    StepFunctions,
    /// A Lambda durable execution: `SendDurableExecutionCallbackSuccess` with the token as the
    /// callback id.
    Durable,
}

impl WakeEngine {
    /// A states ARN, or no ARN at all (rows written before drivers recorded one, which were all
    /// Step Functions drivers), is Step Functions; anything else is a durable execution. That
    /// includes a `arn:<partition>:lambda:...:durable-execution:...` ARN and the durable
    /// execution ids the local emulator hands out, which are not ARNs.
    pub fn of(execution_arn: &str) -> WakeEngine {
        let arn = execution_arn.trim();
        if arn.is_empty() || arn.split(':').nth(2) == Some("states") {
            WakeEngine::StepFunctions
        } else {
            WakeEngine::Durable
        }
    }
}

/// Lineage name of a TPF re-drive: the version the re-drive committed makes it unique, so a
/// replayed stream record starts the same (already existing) execution.
pub fn redrive_lineage(execution_id: &str, version: i64) -> String {
    format!("{execution_id}-r{version}")
}

/// A status every driver stopped on and only TPF's re-drive leaves (with `allowFailed` for
/// FAILED and REMOTE_OUTCOME_UNKNOWN).
fn is_terminal_failure(status: &str) -> bool {
    ExecutionStatus::parse(status).is_some_and(|s| s.redrivable(true))
}

/// Decides what to do about one event. `token` is the current wakeup row of the record's
/// execution, looked up by the caller (`None` when no driver is parked).
pub fn decide(event: &BridgeEvent, token: Option<&TokenRow>) -> Vec<BridgeAction> {
    match event {
        BridgeEvent::RecordChanged { old: None, new } => vec![start(new, new.execution_id.clone())],
        BridgeEvent::RecordChanged {
            old: Some(old),
            new,
        } => {
            let mut actions = Vec::new();
            // Re-drive: a terminal failure became runnable again. A new lineage, same machine.
            if is_terminal_failure(&old.status) && new.status == "QUEUED" {
                actions.push(start(new, redrive_lineage(&new.execution_id, new.version)));
            }
            // Left WAITING_EXTERNAL (completion admitted, timeout applied): wake the driver parked
            // on that unit. No token yet means the driver has not parked; the token-registration
            // re-check below closes that race.
            if old.status == "WAITING_EXTERNAL" && new.status != "WAITING_EXTERNAL" {
                if let Some(t) = token {
                    if old.await_unit_id.as_deref() == Some(t.unit_id.as_str()) {
                        actions.push(wake(t, "bridge:record-changed"));
                    }
                }
            }
            actions
        }
        BridgeEvent::TokenRegistered { token, record } => {
            let still_parked = record.as_ref().is_some_and(|r| {
                r.status == "WAITING_EXTERNAL"
                    && r.await_unit_id.as_deref() == Some(token.unit_id.as_str())
            });
            if still_parked {
                Vec::new()
            } else {
                vec![wake(token, "bridge:token-recheck")]
            }
        }
    }
}

fn start(r: &RecordImage, lineage: String) -> BridgeAction {
    BridgeAction::StartDriver {
        tenant_id: r.tenant_id.clone(),
        execution_id: r.execution_id.clone(),
        pipeline_id: r.pipeline_id.clone(),
        release_version: r.release_version.clone(),
        lineage,
    }
}

fn wake(t: &TokenRow, by: &str) -> BridgeAction {
    BridgeAction::Wake {
        task_token: t.task_token.clone(),
        output: woken_by(by),
    }
}

/// What a wake hands the parked driver: who woke it (`bridge`, `sweeper`), as the Step
/// Functions sweeper's task output says it.
pub fn woken_by(by: &str) -> Value {
    json!({ "wokenBy": by })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(status: &str, version: i64, unit: Option<&str>) -> RecordImage {
        RecordImage {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            pipeline_id: "p".into(),
            release_version: "r".into(),
            status: status.into(),
            version,
            await_unit_id: unit.map(Into::into),
            last_transition_key: None,
        }
    }

    fn token(unit: &str) -> TokenRow {
        TokenRow {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            task_token: "tok".into(),
            unit_id: unit.into(),
            execution_arn: "arn".into(),
        }
    }

    #[test]
    fn a_new_record_starts_the_first_lineage() {
        let a = decide(
            &BridgeEvent::RecordChanged {
                old: None,
                new: rec("QUEUED", 0, None),
            },
            None,
        );
        assert_eq!(
            a,
            vec![BridgeAction::StartDriver {
                tenant_id: "t".into(),
                execution_id: "e".into(),
                pipeline_id: "p".into(),
                release_version: "r".into(),
                lineage: "e".into()
            }]
        );
    }

    #[test]
    fn an_item_child_insert_starts_its_own_lineage_on_the_pinned_release() {
        // The child of item 2 of the parent's unit: its own id, the parent's pinned release.
        let child = RecordImage {
            execution_id: "child-2".into(),
            ..rec("QUEUED", 0, None)
        };
        assert_eq!(
            decide(
                &BridgeEvent::RecordChanged {
                    old: None,
                    new: child
                },
                None
            ),
            vec![BridgeAction::StartDriver {
                tenant_id: "t".into(),
                execution_id: "child-2".into(),
                pipeline_id: "p".into(),
                release_version: "r".into(),
                lineage: "child-2".into()
            }]
        );
        // Its retries are its own driver's waits: nothing for the bridge to do.
        let retry = BridgeEvent::RecordChanged {
            old: Some(RecordImage {
                execution_id: "child-2".into(),
                ..rec("RUNNING", 1, None)
            }),
            new: RecordImage {
                execution_id: "child-2".into(),
                ..rec("WAIT_RETRY", 2, None)
            },
        };
        assert!(decide(&retry, None).is_empty());
    }

    #[test]
    fn leaving_the_await_wakes_only_the_token_of_that_unit() {
        let ev = BridgeEvent::RecordChanged {
            old: Some(rec("WAITING_EXTERNAL", 2, Some("u"))),
            new: rec("QUEUED", 3, Some("u")),
        };
        assert!(matches!(
            decide(&ev, Some(&token("u")))[..],
            [BridgeAction::Wake { .. }]
        ));
        assert!(decide(&ev, Some(&token("other"))).is_empty());
        assert!(decide(&ev, None).is_empty());
    }

    #[test]
    fn a_token_for_a_record_that_already_moved_on_is_woken_at_once() {
        let still = BridgeEvent::TokenRegistered {
            token: token("u"),
            record: Some(rec("WAITING_EXTERNAL", 2, Some("u"))),
        };
        assert!(decide(&still, None).is_empty());
        let moved = BridgeEvent::TokenRegistered {
            token: token("u"),
            record: Some(rec("QUEUED", 3, Some("u"))),
        };
        assert_eq!(decide(&moved, None).len(), 1);
        let gone = BridgeEvent::TokenRegistered {
            token: token("u"),
            record: None,
        };
        assert_eq!(decide(&gone, None).len(), 1);
    }

    #[test]
    fn a_redrive_starts_a_lineage_named_by_the_committed_version() {
        let ev = BridgeEvent::RecordChanged {
            old: Some(rec("FAILED", 7, None)),
            new: rec("QUEUED", 8, None),
        };
        assert_eq!(
            decide(&ev, None),
            vec![BridgeAction::StartDriver {
                tenant_id: "t".into(),
                execution_id: "e".into(),
                pipeline_id: "p".into(),
                release_version: "r".into(),
                lineage: "e-r8".into()
            }]
        );
    }

    #[test]
    fn a_redrive_from_remote_outcome_unknown_starts_a_driver_and_a_parked_one_is_woken() {
        let ev = BridgeEvent::RecordChanged {
            old: Some(rec("REMOTE_OUTCOME_UNKNOWN", 4, None)),
            new: rec("QUEUED", 5, None),
        };
        assert!(matches!(
            &decide(&ev, None)[..],
            [BridgeAction::StartDriver { lineage, .. }] if lineage == "e-r5"
        ));
        // A driver parked on a unit whose record moved to REMOTE_OUTCOME_UNKNOWN is woken, asks,
        // and stops on TPF's answer.
        let parked = BridgeEvent::RecordChanged {
            old: Some(rec("WAITING_EXTERNAL", 2, Some("u"))),
            new: rec("REMOTE_OUTCOME_UNKNOWN", 3, Some("u")),
        };
        assert_eq!(decide(&parked, Some(&token("u"))).len(), 1);
    }

    #[test]
    fn the_token_rows_arn_picks_the_engine_to_wake() {
        for arn in [
            "arn:aws:states:us-east-1:123456789012:execution:m:e",
            "arn:aws-cn:states:cn-north-1:123456789012:execution:m:e",
            "",
        ] {
            assert_eq!(WakeEngine::of(arn), WakeEngine::StepFunctions, "{arn}");
        }
        for arn in [
            "arn:aws:lambda:us-east-1:123456789012:function:f:3/durable-execution/e/0e3c",
            "3f1b7c2e-0000-4000-8000-000000000000/9a6e",
        ] {
            assert_eq!(WakeEngine::of(arn), WakeEngine::Durable, "{arn}");
        }
    }

    #[test]
    fn other_transitions_do_nothing() {
        let ev = BridgeEvent::RecordChanged {
            old: Some(rec("QUEUED", 0, None)),
            new: rec("RUNNING", 1, None),
        };
        assert!(decide(&ev, Some(&token("u"))).is_empty());
    }
}
