//! `ExecutionStateStore` over `tpf_execution` and `tpf_execution_key`, with the conditions of
//! TPF's `DynamoExecutionStateStore`.

use std::collections::HashMap;
use tpf_wire::records::attr;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::Value;
use tpf_model::store::{
    CreateExecutionCommand, CreateOrGet, ExecutionStore, StoreError, StoreResult,
};
use tpf_wire::ids;
use tpf_wire::records::{execution_attr, DynamoItem, ExecutionRecord, ExecutionStatus};

use super::expression::{names_for, values_for, Write};
use super::{decode, unavailable, DynamoStore};
use crate::aws::dynamo_item::{n, s, to_sdk};

pub(super) const TTL_OK: &str = "(attribute_not_exists(#ttl_epoch_s) OR #ttl_epoch_s > :now_s)";
const EXECUTION_REMOVE_OUTCOME: &str =
    "#result_payload_json, #error_code, #error_message, #lease_owner";

/// `DynamoExecutionStateStore.truncate`.
fn truncate_error(message: &str) -> String {
    message.chars().take(512).collect()
}

fn status(value: ExecutionStatus) -> AttributeValue {
    s(value.as_str())
}

impl DynamoStore {
    fn execution_key(tenant_id: &str, execution_id: &str) -> Vec<(&'static str, AttributeValue)> {
        vec![
            (attr::TENANT_ID, s(tenant_id)),
            (attr::EXECUTION_ID, s(execution_id)),
        ]
    }

    /// The shape of every conditional execution write: row exists, TTL live, `condition`; then
    /// `version + 1` and `updated_at` on top of `set`.
    // The arguments are the parts of one UpdateItem; bundling them would only rename them.
    #[allow(clippy::too_many_arguments)]
    fn update_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
        condition: &str,
        set: &str,
        remove: &str,
        mut values: Vec<(&'static str, AttributeValue)>,
    ) -> StoreResult<Option<ExecutionRecord>> {
        values.extend([
            (":now", n(now_ms)),
            (":now_s", n(now_ms.div_euclid(1000))),
            (":one", n(1)),
        ]);
        let mut update =
            format!("SET #version = #version + :one, #updated_at_epoch_ms = :now, {set}");
        if !remove.is_empty() {
            update.push_str(" REMOVE ");
            update.push_str(remove);
        }
        self.update(
            &self.tables.execution,
            Self::execution_key(tenant_id, execution_id),
            Write {
                update,
                condition: format!("attribute_exists(#tenant_id) AND {TTL_OK} AND ({condition})"),
                values,
            },
        )
    }

    fn execution_by_key(
        &self,
        tenant_id: &str,
        execution_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        let scoped = ids::scoped_execution_key(tenant_id, execution_key);
        let Some(key_row) = self.get(
            &self.tables.execution_key,
            vec![("tenant_execution_key", s(scoped))],
        )?
        else {
            return Ok(None);
        };
        let Some(AttributeValue::S(execution_id)) = key_row.get(attr::EXECUTION_ID) else {
            return Ok(None);
        };
        self.get_execution(tenant_id, execution_id, now_ms)
    }
}

impl ExecutionStore for DynamoStore {
    fn create_or_get_execution(
        &self,
        cmd: &CreateExecutionCommand,
    ) -> StoreResult<CreateOrGet<ExecutionRecord>> {
        if let Some(record) =
            self.execution_by_key(&cmd.tenant_id, &cmd.execution_key, cmd.now_ms)?
        {
            return Ok(CreateOrGet {
                record,
                duplicate: true,
            });
        }
        let record = cmd.new_record();
        let key_item = HashMap::from([
            (
                "tenant_execution_key".to_owned(),
                s(ids::scoped_execution_key(
                    &cmd.tenant_id,
                    &cmd.execution_key,
                )),
            ),
            (attr::TENANT_ID.to_owned(), s(cmd.tenant_id.clone())),
            (attr::EXECUTION_ID.to_owned(), s(cmd.execution_id.clone())),
            (attr::CREATED_AT_EPOCH_MS.to_owned(), n(cmd.now_ms)),
            (attr::UPDATED_AT_EPOCH_MS.to_owned(), n(cmd.now_ms)),
            (attr::TTL_EPOCH_S.to_owned(), n(cmd.ttl_epoch_s)),
        ]);
        // TPF's conditions are `attribute_not_exists(...)`; expired rows count as absent here
        // too (TPF deletes them lazily), otherwise an expired key would block its own reuse.
        let now_s = || vec![(":now_s", n(cmd.now_ms.div_euclid(1000)))];
        let items = vec![
            Self::conditional_put(
                &self.tables.execution,
                to_sdk(&record.to_item()),
                "(attribute_not_exists(#tenant_id) AND attribute_not_exists(#execution_id)) OR #ttl_epoch_s <= :now_s",
                now_s(),
            )?,
            Self::conditional_put(
                &self.tables.execution_key,
                key_item,
                "attribute_not_exists(#tenant_execution_key) OR #ttl_epoch_s <= :now_s",
                now_s(),
            )?,
        ];
        if self.transact(items)? {
            return Ok(CreateOrGet {
                record,
                duplicate: false,
            });
        }
        // Lost the race: the winner's row is the answer.
        match self.execution_by_key(&cmd.tenant_id, &cmd.execution_key, cmd.now_ms)? {
            Some(record) => Ok(CreateOrGet {
                record,
                duplicate: true,
            }),
            None => Err(StoreError::new(format!(
                "execution create for key {} was cancelled and no row is visible",
                cmd.execution_key
            ))),
        }
    }

    fn get_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        let Some(item) = self.get(
            &self.tables.execution,
            Self::execution_key(tenant_id, execution_id),
        )?
        else {
            return Ok(None);
        };
        let record: ExecutionRecord = decode(&item)?;
        Ok(record.live_at(now_ms).then_some(record))
    }

    fn claim_lease(
        &self,
        tenant_id: &str,
        execution_id: &str,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            CLAIMABLE,
            "#status = :running, #lease_owner = :owner, #lease_expires_epoch_ms = :expires",
            "",
            [
                claimable_values(),
                vec![
                    (":running", status(ExecutionStatus::Running)),
                    (":owner", s(owner)),
                    (":expires", n(now_ms.saturating_add(lease_ms))),
                ],
            ]
            .concat(),
        )
    }

    fn mark_succeeded(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        result: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#version = :expected",
            "#status = :status, #last_transition_key = :tk, #result_payload_json = :result, \
             #lease_expires_epoch_ms = :zero, #next_due_epoch_ms = :now",
            "#error_code, #error_message, #lease_owner, #await_unit_id",
            vec![
                (":expected", n(expected_version)),
                (":status", status(ExecutionStatus::Succeeded)),
                (":tk", s(transition_key)),
                (":result", s(result.to_string())),
                (":zero", n(0)),
            ],
        )
    }

    fn mark_waiting_external(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        await_unit_id: &str,
        await_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#version = :expected",
            "#status = :status, #last_transition_key = :tk, #current_step_index = :step, \
             #next_due_epoch_ms = :max, #await_unit_id = :unit, #lease_expires_epoch_ms = :zero",
            EXECUTION_REMOVE_OUTCOME,
            vec![
                (":expected", n(expected_version)),
                (":status", status(ExecutionStatus::WaitingExternal)),
                (":tk", s(transition_key)),
                (":step", n(i64::from(await_step_index))),
                (":max", n(i64::MAX)),
                (":unit", s(await_unit_id)),
                (":zero", n(0)),
            ],
        )
    }

    fn mark_await_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#status = :waiting AND (attribute_not_exists(#await_unit_id) OR #await_unit_id = :unit)",
            "#status = :queued, #current_step_index = :step, #next_due_epoch_ms = :now, \
             #await_unit_id = :unit, #lease_expires_epoch_ms = :zero",
            EXECUTION_REMOVE_OUTCOME,
            vec![
                (":waiting", status(ExecutionStatus::WaitingExternal)),
                (":queued", status(ExecutionStatus::Queued)),
                (":unit", s(await_unit_id)),
                (":step", n(i64::from(next_step_index))),
                (":zero", n(0)),
            ],
        )
    }

    fn mark_await_item_continuations_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        input_payload: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#status = :waiting AND #await_unit_id = :unit",
            "#status = :queued, #current_step_index = :step, #next_due_epoch_ms = :now, \
             #input_payload_json = :input, #lease_expires_epoch_ms = :zero",
            "#result_payload_json, #error_code, #error_message, #lease_owner, #await_unit_id",
            vec![
                (":waiting", status(ExecutionStatus::WaitingExternal)),
                (":queued", status(ExecutionStatus::Queued)),
                (":unit", s(await_unit_id)),
                (":step", n(i64::from(next_step_index))),
                (":input", s(input_payload.to_string())),
                (":zero", n(0)),
            ],
        )
    }

    fn schedule_retry(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        next_attempt: u32,
        next_due_epoch_ms: i64,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#version = :expected",
            "#status = :status, #attempt = :attempt, #next_due_epoch_ms = :due, \
             #last_transition_key = :tk, #error_code = :code, #error_message = :message, \
             #lease_expires_epoch_ms = :zero",
            "#result_payload_json, #lease_owner",
            vec![
                (":expected", n(expected_version)),
                (":status", status(ExecutionStatus::WaitRetry)),
                (":attempt", n(i64::from(next_attempt))),
                (":due", n(next_due_epoch_ms)),
                (":tk", s(transition_key)),
                (":code", s(error_code)),
                (":message", s(truncate_error(error_message))),
                (":zero", n(0)),
            ],
        )
    }

    fn mark_terminal_failure(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        terminal: ExecutionStatus,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        if !matches!(terminal, ExecutionStatus::Failed | ExecutionStatus::Dlq) {
            return Ok(None);
        }
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#version = :expected",
            "#status = :status, #next_due_epoch_ms = :now, #last_transition_key = :tk, \
             #error_code = :code, #error_message = :message, #lease_expires_epoch_ms = :zero",
            "#result_payload_json, #lease_owner",
            vec![
                (":expected", n(expected_version)),
                (":status", status(terminal)),
                (":tk", s(transition_key)),
                (":code", s(error_code)),
                (":message", s(truncate_error(error_message))),
                (":zero", n(0)),
            ],
        )
    }

    fn mark_remote_outcome_unknown(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            "#version = :expected",
            "#status = :status, #next_due_epoch_ms = :never, #error_code = :code, \
             #error_message = :message, #lease_expires_epoch_ms = :zero",
            "#result_payload_json, #lease_owner",
            vec![
                (":expected", n(expected_version)),
                (":status", status(ExecutionStatus::RemoteOutcomeUnknown)),
                (":never", n(i64::MAX)),
                (":code", s(error_code)),
                (":message", s(truncate_error(error_message))),
                (":zero", n(0)),
            ],
        )
    }

    fn redrive_terminal_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        allow_failed: bool,
        transition_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        let condition = if allow_failed {
            "#version = :expected AND (#status = :dlq OR #status = :failed OR #status = :rou)"
        } else {
            "#version = :expected AND #status = :dlq"
        };
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            condition,
            "#status = :queued, #attempt = #attempt + :one, #next_due_epoch_ms = :now, \
             #last_transition_key = :tk, #lease_expires_epoch_ms = :zero, \
             #redrive_intent = :intent",
            EXECUTION_REMOVE_OUTCOME,
            vec![
                (":intent", s(execution_attr::REPLAY)),
                (":expected", n(expected_version)),
                (":dlq", status(ExecutionStatus::Dlq)),
                (":failed", status(ExecutionStatus::Failed)),
                (":rou", status(ExecutionStatus::RemoteOutcomeUnknown)),
                (":queued", status(ExecutionStatus::Queued)),
                (":tk", s(transition_key)),
                (":zero", n(0)),
            ],
        )
    }

    fn get_execution_by_key(
        &self,
        tenant_id: &str,
        execution_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.execution_by_key(tenant_id, execution_key, now_ms)
    }

    /// A Scan with claimLease's filter, as TPF does: pages of `3 × limit`, stopping once
    /// `3 × limit` candidates are in hand, then sorted and cut to `limit`.
    fn find_due_executions(&self, now_ms: i64, limit: usize) -> StoreResult<Vec<ExecutionRecord>> {
        let wanted = limit.saturating_mul(3);
        let page = i32::try_from(wanted).unwrap_or(i32::MAX).clamp(1, 1000);
        let filter = format!("{CLAIMABLE} AND {TTL_OK}");
        let expressions = [filter.as_str()];
        let mut values = claimable_values();
        values.extend([(":now", n(now_ms)), (":now_s", n(now_ms.div_euclid(1000)))]);
        let mut pages = self
            .client
            .scan()
            .table_name(&self.tables.execution)
            .filter_expression(&filter)
            .set_expression_attribute_names(Some(names_for(&expressions)))
            .set_expression_attribute_values(values_for(&expressions, values))
            .consistent_read(true)
            .into_paginator()
            .page_size(page)
            .send();
        let mut due: Vec<ExecutionRecord> = Vec::new();
        while due.len() < wanted {
            let Some(out) = self.block(pages.next()) else {
                break;
            };
            for item in out.map_err(|e| unavailable("Scan", e))?.items() {
                due.push(decode(item)?);
            }
        }
        due.sort_by(|a, b| {
            (a.next_due_epoch_ms, &a.tenant_id, &a.execution_id).cmp(&(
                b.next_due_epoch_ms,
                &b.tenant_id,
                &b.execution_id,
            ))
        });
        due.truncate(limit);
        Ok(due)
    }
}

/// claimLease's condition (TTL is added by the caller).
const CLAIMABLE: &str = "#next_due_epoch_ms <= :now AND (attribute_not_exists(#lease_owner) OR \
     #lease_expires_epoch_ms <= :now) AND NOT #status IN (:succeeded, :waiting_external, :failed, :dlq, \
     :remote_outcome_unknown)";

/// The statuses [`CLAIMABLE`] excludes: exactly `ExecutionStatus::unclaimable`.
fn claimable_values() -> Vec<(&'static str, AttributeValue)> {
    vec![
        (":succeeded", status(ExecutionStatus::Succeeded)),
        (
            ":waiting_external",
            status(ExecutionStatus::WaitingExternal),
        ),
        (":failed", status(ExecutionStatus::Failed)),
        (":dlq", status(ExecutionStatus::Dlq)),
        (
            ":remote_outcome_unknown",
            status(ExecutionStatus::RemoteOutcomeUnknown),
        ),
    ]
}
