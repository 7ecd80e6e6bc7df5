//! The ordered log of committed execution-record changes and action calls.
//!
//! The mapping harness builds traces from it and checks invariants over it. Every entry is
//! appended right after the store accepted a conditional write, so the log is exactly the
//! sequence of commits TPF would see.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use tpf_wire::records::{ExecutionRecord, ExecutionStatus};

/// One committed execution-record change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordTransition {
    pub at_ms: i64,
    pub tenant_id: String,
    pub execution_id: String,
    pub version: i64,
    pub status: ExecutionStatus,
    pub step_index: u32,
    pub attempt: u32,
    /// The await unit the record points at after this write (what a DynamoDB stream image
    /// carries; the wakeup bridge matches it against parked tokens).
    pub await_unit_id: Option<String>,
    /// `create`, `claim`, `succeed`, `park`, `await-completed`, `await-items-completed`,
    /// `retry`, `fail`, `redrive`, `await-timeout`.
    pub cause: &'static str,
}

/// One call into the model's public operations: the control-plane calls (`submit`,
/// `complete-await`, `redrive`). A direct `Coordinator::process_work_item` is TPF's internal
/// dispatch path and is not a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionCall {
    pub at_ms: i64,
    /// `submit`, `complete-await`, `redrive`.
    pub action: &'static str,
    pub tenant_id: Option<String>,
    pub execution_id: Option<String>,
    pub idempotency_key: Option<String>,
    /// The resulting status, or the error code.
    pub outcome: String,
    /// Answered from the idempotency-key replay cache.
    pub replayed: bool,
}

/// A broken invariant, named so a failing check says which rule it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvariantViolation {
    pub invariant: &'static str,
    pub detail: String,
}

impl fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

#[derive(Debug, Clone, Default)]
pub struct TransitionLog {
    transitions: Vec<RecordTransition>,
    calls: Vec<ActionCall>,
}

impl TransitionLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, at_ms: i64, record: &ExecutionRecord, cause: &'static str) {
        self.transitions.push(RecordTransition {
            at_ms,
            tenant_id: record.tenant_id.clone(),
            execution_id: record.execution_id.clone(),
            version: record.version,
            status: record.status,
            step_index: record.current_step_index,
            attempt: record.attempt,
            await_unit_id: record.await_unit_id.clone(),
            cause,
        });
    }

    pub fn call(&mut self, call: ActionCall) {
        self.calls.push(call);
    }

    pub fn transitions(&self) -> &[RecordTransition] {
        &self.transitions
    }

    pub fn calls(&self) -> &[ActionCall] {
        &self.calls
    }

    pub fn for_execution<'a>(
        &'a self,
        tenant_id: &'a str,
        execution_id: &'a str,
    ) -> impl Iterator<Item = &'a RecordTransition> + 'a {
        self.transitions
            .iter()
            .filter(move |t| t.tenant_id == tenant_id && t.execution_id == execution_id)
    }

    pub fn count(&self, execution_id: &str, cause: &str) -> usize {
        self.transitions
            .iter()
            .filter(|t| t.execution_id == execution_id && t.cause == cause)
            .count()
    }

    /// Every execution starts at version 0 and each commit adds exactly 1: OCC makes commits
    /// single-winner, so a gap or repeat means a write bypassed its condition.
    pub fn check_versions_contiguous(&self) -> Result<(), InvariantViolation> {
        let mut last: BTreeMap<(&str, &str), i64> = BTreeMap::new();
        for t in &self.transitions {
            let row = (t.tenant_id.as_str(), t.execution_id.as_str());
            let expected = last.get(&row).map_or(0, |v| v + 1);
            if t.version != expected {
                return Err(InvariantViolation {
                    invariant: "versions-increase-by-one",
                    detail: format!(
                        "{}/{} committed version {} ({}) after {}",
                        t.tenant_id,
                        t.execution_id,
                        t.version,
                        t.cause,
                        expected - 1
                    ),
                });
            }
            last.insert(row, t.version);
        }
        Ok(())
    }

    /// No (execution, version) is committed twice: a transition is never applied twice.
    pub fn check_no_transition_applied_twice(&self) -> Result<(), InvariantViolation> {
        let mut seen: BTreeMap<(&str, &str, i64), &'static str> = BTreeMap::new();
        for t in &self.transitions {
            if let Some(previous) = seen.insert(
                (t.tenant_id.as_str(), t.execution_id.as_str(), t.version),
                t.cause,
            ) {
                return Err(InvariantViolation {
                    invariant: "no-transition-applied-twice",
                    detail: format!(
                        "{}/{} version {} committed by both {} and {}",
                        t.tenant_id, t.execution_id, t.version, previous, t.cause
                    ),
                });
            }
        }
        Ok(())
    }

    /// Nothing leaves a terminal status except a re-drive.
    pub fn check_terminal_only_left_by_redrive(&self) -> Result<(), InvariantViolation> {
        let mut last: BTreeMap<(&str, &str), ExecutionStatus> = BTreeMap::new();
        for t in &self.transitions {
            let row = (t.tenant_id.as_str(), t.execution_id.as_str());
            if let Some(previous) = last.get(&row) {
                if previous.terminal() && t.cause != "redrive" {
                    return Err(InvariantViolation {
                        invariant: "terminal-only-left-by-redrive",
                        detail: format!(
                            "{}/{} left {} by {}",
                            t.tenant_id, t.execution_id, previous, t.cause
                        ),
                    });
                }
            }
            last.insert(row, t.status);
        }
        Ok(())
    }

    /// All checks above.
    pub fn check_all(&self) -> Result<(), InvariantViolation> {
        self.check_versions_contiguous()?;
        self.check_no_transition_applied_twice()?;
        self.check_terminal_only_left_by_redrive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use tpf_wire::records::ResultShape;

    fn at(version: i64, status: ExecutionStatus) -> ExecutionRecord {
        ExecutionRecord {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            execution_key: "k".into(),
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
            result_shape: ResultShape::Single,
            status,
            version,
            current_step_index: 0,
            attempt: 0,
            lease_owner: None,
            lease_expires_epoch_ms: 0,
            next_due_epoch_ms: 0,
            last_transition_key: None,
            input_payload: Value::Null,
            await_unit_id: None,
            result_payload: None,
            error_code: None,
            error_message: None,
            created_at_epoch_ms: 0,
            updated_at_epoch_ms: 0,
            ttl_epoch_s: 1,
            redrive_intent: tpf_wire::records::execution_attr::REPLAY.into(),
            failed_step_index: tpf_wire::records::execution_attr::NO_FAILED_STEP,
            carried: Default::default(),
        }
    }

    #[test]
    fn a_clean_log_passes() {
        let mut log = TransitionLog::new();
        log.record(0, &at(0, ExecutionStatus::Queued), "create");
        log.record(1, &at(1, ExecutionStatus::Running), "claim");
        log.record(2, &at(2, ExecutionStatus::Failed), "fail");
        log.record(3, &at(3, ExecutionStatus::Queued), "redrive");
        assert_eq!(log.check_all(), Ok(()));
    }

    #[test]
    fn a_skipped_version_is_caught() {
        let mut log = TransitionLog::new();
        log.record(0, &at(0, ExecutionStatus::Queued), "create");
        log.record(1, &at(2, ExecutionStatus::Running), "claim");
        let err = log.check_versions_contiguous().unwrap_err();
        assert_eq!(err.invariant, "versions-increase-by-one");
    }

    #[test]
    fn a_transition_applied_twice_is_caught() {
        let mut log = TransitionLog::new();
        log.record(0, &at(0, ExecutionStatus::Queued), "create");
        log.record(1, &at(1, ExecutionStatus::Running), "claim");
        log.record(2, &at(1, ExecutionStatus::Running), "claim");
        let err = log.check_no_transition_applied_twice().unwrap_err();
        assert_eq!(err.invariant, "no-transition-applied-twice");
        assert!(log.check_versions_contiguous().is_err());
    }

    #[test]
    fn leaving_a_terminal_status_other_than_by_redrive_is_caught() {
        let mut log = TransitionLog::new();
        log.record(0, &at(0, ExecutionStatus::Succeeded), "succeed");
        log.record(1, &at(1, ExecutionStatus::Running), "claim");
        let err = log.check_terminal_only_left_by_redrive().unwrap_err();
        assert_eq!(err.invariant, "terminal-only-left-by-redrive");
    }
}
