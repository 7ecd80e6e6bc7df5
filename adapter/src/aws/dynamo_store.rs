//! TPF's store SPIs over TPF's own DynamoDB tables, with the conditional expressions of
//! `DynamoExecutionStateStore`, the await unit/interaction stores and the Dynamo release
//! registry. Rows are written with TPF's attribute names, so TPF and this adapter can share
//! the tables.
//!
//! The traits are synchronous; every call blocks on the runtime handle the store was built
//! with. Call it from plain threads — inside async code use `tokio::task::spawn_blocking`, since
//! `Handle::block_on` panics on a runtime worker thread.
//!
//! A failed condition is `Ok(None)` (TPF's `Optional.empty()`), classified with the SDK's typed
//! error methods; everything else is a `StoreError`.

use std::collections::HashMap;

use aws_sdk_dynamodb::error::{DisplayErrorContext, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Put, ReturnValue, TransactWriteItem,
};
use aws_sdk_dynamodb::Client;
use serde_json::Value;
use tokio::runtime::Handle;
use tpf_model::store::{
    AwaitStore, CreateExecutionCommand, CreateOrGet, ExecutionStore, RegistryError,
    ReleaseRegistry, StoreError, StoreResult,
};
use tpf_wire::ids;
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus, DynamoItem,
    ExecutionRecord, ExecutionStatus, PipelineReleaseRecord, ReleaseActivationEvent, ReleaseStatus,
};

use super::dynamo_item::{
    deadline_sort, from_sdk, interaction_item, n, s, to_sdk, unit_query_key, SdkItem,
    PENDING_INDEX_ATTRIBUTES,
};
use super::tables::{TableNames, GSI_BY_UNIT, GSI_PENDING_BY_DEADLINE, GSI_PENDING_BY_TENANT};

/// Every store trait over DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoStore {
    client: Client,
    tables: TableNames,
    runtime: Handle,
}

/// A conditional write: the expressions plus their placeholders. Attribute names are written
/// `#name` and mapped to `name` automatically (TPF's attributes include reserved words such as
/// `status`); only the values an expression mentions are sent, since DynamoDB rejects unused ones.
struct Write {
    update: String,
    condition: String,
    values: Vec<(&'static str, AttributeValue)>,
}

fn placeholders(expressions: &[&str], sigil: char) -> Vec<String> {
    let mut found = Vec::new();
    for expression in expressions {
        let mut chars = expression.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c != sigil {
                continue;
            }
            let mut end = i + 1;
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let token = &expression[i..end];
            if token.len() > 1 && !found.iter().any(|f| f == token) {
                found.push(token.to_owned());
            }
        }
    }
    found
}

fn names_for(expressions: &[&str]) -> HashMap<String, String> {
    placeholders(expressions, '#')
        .into_iter()
        .map(|token| {
            let name = token[1..].to_owned();
            (token, name)
        })
        .collect()
}

fn values_for(
    expressions: &[&str],
    values: Vec<(&'static str, AttributeValue)>,
) -> Option<HashMap<String, AttributeValue>> {
    let used = placeholders(expressions, ':');
    let map: HashMap<String, AttributeValue> = values
        .into_iter()
        .filter(|(name, _)| used.iter().any(|u| u == name))
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    (!map.is_empty()).then_some(map)
}

fn unavailable<E, R>(operation: &str, e: &SdkError<E, R>) -> StoreError
where
    E: std::error::Error + 'static,
    R: std::fmt::Debug,
{
    StoreError(format!("{operation}: {}", DisplayErrorContext(e)))
}

fn decode<T: DynamoItem>(item: &SdkItem) -> StoreResult<T> {
    T::from_item(&from_sdk(item))
        .map_err(|e| StoreError(format!("{} row does not decode: {e}", T::TABLE)))
}

const TTL_OK: &str = "(attribute_not_exists(#ttl_epoch_s) OR #ttl_epoch_s > :now_s)";
const EXECUTION_REMOVE_OUTCOME: &str =
    "#result_payload_json, #error_code, #error_message, #lease_owner";

/// `DynamoExecutionStateStore.truncate`.
fn truncate_error(message: &str) -> String {
    message.chars().take(512).collect()
}

fn status(value: ExecutionStatus) -> AttributeValue {
    s(value.as_str())
}

fn with_activation(mut release: PipelineReleaseRecord, at_ms: i64) -> PipelineReleaseRecord {
    release.status = ReleaseStatus::Active;
    release.activated_at_epoch_ms = at_ms;
    release
}

impl DynamoStore {
    pub fn new(client: Client, tables: TableNames, runtime: Handle) -> Self {
        Self {
            client,
            tables,
            runtime,
        }
    }

    pub fn tables(&self) -> &TableNames {
        &self.tables
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn block<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    fn get(&self, table: &str, key: Vec<(&str, AttributeValue)>) -> StoreResult<Option<SdkItem>> {
        let mut request = self
            .client
            .get_item()
            .table_name(table)
            .consistent_read(true);
        for (name, value) in key {
            request = request.key(name, value);
        }
        let out = self
            .block(request.send())
            .map_err(|e| unavailable("GetItem", &e))?;
        Ok(out.item().cloned())
    }

    /// One conditional `UpdateItem` returning the new row, or `None` when the condition failed.
    fn update<T: DynamoItem>(
        &self,
        table: &str,
        key: Vec<(&str, AttributeValue)>,
        write: Write,
    ) -> StoreResult<Option<T>> {
        let expressions = [write.update.as_str(), write.condition.as_str()];
        let mut request = self
            .client
            .update_item()
            .table_name(table)
            .update_expression(&write.update)
            .condition_expression(&write.condition)
            .set_expression_attribute_names(Some(names_for(&expressions)))
            .set_expression_attribute_values(values_for(&expressions, write.values))
            .return_values(ReturnValue::AllNew);
        for (name, value) in key {
            request = request.key(name, value);
        }
        match self.block(request.send()) {
            Ok(out) => out.attributes().map(decode).transpose(),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_conditional_check_failed_exception()) =>
            {
                Ok(None)
            }
            Err(e) => Err(unavailable("UpdateItem", &e)),
        }
    }

    /// A conditional `PutItem`; false when the condition failed.
    fn put_if(
        &self,
        table: &str,
        item: SdkItem,
        condition: &str,
        values: Vec<(&'static str, AttributeValue)>,
    ) -> StoreResult<bool> {
        let request = self
            .client
            .put_item()
            .table_name(table)
            .set_item(Some(item))
            .condition_expression(condition)
            .set_expression_attribute_names(Some(names_for(&[condition])))
            .set_expression_attribute_values(values_for(&[condition], values));
        match self.block(request.send()) {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(unavailable("PutItem", &e)),
        }
    }

    /// `TransactWriteItems`; false when the transaction was cancelled (a condition failed).
    fn transact(&self, items: Vec<TransactWriteItem>) -> StoreResult<bool> {
        match self.block(
            self.client
                .transact_write_items()
                .set_transact_items(Some(items))
                .send(),
        ) {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_transaction_canceled_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(unavailable("TransactWriteItems", &e)),
        }
    }

    fn conditional_put(
        table: &str,
        item: SdkItem,
        condition: &str,
        values: Vec<(&'static str, AttributeValue)>,
    ) -> StoreResult<TransactWriteItem> {
        let put = Put::builder()
            .table_name(table)
            .set_item(Some(item))
            .condition_expression(condition)
            .set_expression_attribute_names(Some(names_for(&[condition])))
            .set_expression_attribute_values(values_for(&[condition], values))
            .build()
            .map_err(|e| StoreError(e.to_string()))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// Every page of a query or scan, collected.
    fn query_all(
        &self,
        table: &str,
        index: Option<&str>,
        key_condition: &str,
        values: Vec<(&'static str, AttributeValue)>,
        forward: bool,
        page_limit: Option<i32>,
    ) -> StoreResult<Vec<SdkItem>> {
        let mut items = Vec::new();
        let mut start: Option<SdkItem> = None;
        let expressions = [key_condition];
        let names = names_for(&expressions);
        let values = values_for(&expressions, values);
        loop {
            let out = self
                .block(
                    self.client
                        .query()
                        .table_name(table)
                        .set_index_name(index.map(str::to_owned))
                        .key_condition_expression(key_condition)
                        .set_expression_attribute_names(Some(names.clone()))
                        .set_expression_attribute_values(values.clone())
                        .scan_index_forward(forward)
                        .set_limit(page_limit)
                        .set_exclusive_start_key(start.take())
                        .send(),
                )
                .map_err(|e| unavailable("Query", &e))?;
            items.extend(out.items().iter().cloned());
            match out.last_evaluated_key() {
                Some(last) if !last.is_empty() && page_limit.is_none() => {
                    start = Some(last.clone())
                }
                _ => return Ok(items),
            }
        }
    }

    fn execution_key(tenant_id: &str, execution_id: &str) -> Vec<(&'static str, AttributeValue)> {
        vec![
            ("tenant_id", s(tenant_id)),
            ("execution_id", s(execution_id)),
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
        let Some(AttributeValue::S(execution_id)) = key_row.get("execution_id") else {
            return Ok(None);
        };
        self.get_execution(tenant_id, execution_id, now_ms)
    }

    fn update_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
        condition: &str,
        update: &str,
        mut values: Vec<(&'static str, AttributeValue)>,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        values.extend([
            (":now", n(now_ms)),
            (":one", n(1)),
            (":waiting", s(AwaitUnitStatus::WaitingExternal.as_str())),
        ]);
        self.update(
            &self.tables.await_unit,
            vec![("tenant_id", s(tenant_id)), ("unit_id", s(unit_id))],
            Write {
                update: update.to_owned(),
                condition: format!("attribute_exists(#tenant_id) AND ({condition})"),
                values,
            },
        )
    }

    fn interaction_by_lookup(
        &self,
        lookup_key: String,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        let Some(row) = self.get(
            &self.tables.await_interaction_key,
            vec![("lookup_key", s(lookup_key))],
        )?
        else {
            return Ok(None);
        };
        match (row.get("tenant_id"), row.get("interaction_id")) {
            (Some(AttributeValue::S(tenant)), Some(AttributeValue::S(id))) => {
                self.get_interaction(tenant, id)
            }
            _ => Ok(None),
        }
    }

    fn lookup_item(kind: &str, key: String, record: &AwaitInteractionRecord) -> SdkItem {
        HashMap::from([
            ("lookup_key".to_owned(), s(key)),
            ("lookup_kind".to_owned(), s(kind)),
            ("tenant_id".to_owned(), s(record.tenant_id.clone())),
            (
                "interaction_id".to_owned(),
                s(record.interaction_id.clone()),
            ),
            ("ttl_epoch_s".to_owned(), n(record.ttl_epoch_s)),
        ])
    }

    fn latest_activation(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Option<ReleaseActivationEvent>> {
        let rows = self.query_all(
            &self.tables.release,
            None,
            "#registry_key = :rk AND begins_with(#registry_sort, :prefix)",
            vec![
                (":rk", s(ids::registry_key(tenant_id, pipeline_id))),
                (":prefix", s("activation:")),
            ],
            false,
            Some(1),
        )?;
        rows.first().map(decode).transpose()
    }

    fn release_row(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        self.get(
            &self.tables.release,
            vec![
                ("registry_key", s(ids::registry_key(tenant_id, pipeline_id))),
                ("registry_sort", s(ids::release_sort_key(release_version))),
            ],
        )?
        .as_ref()
        .map(decode)
        .transpose()
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
            ("tenant_id".to_owned(), s(cmd.tenant_id.clone())),
            ("execution_id".to_owned(), s(cmd.execution_id.clone())),
            ("created_at_epoch_ms".to_owned(), n(cmd.now_ms)),
            ("updated_at_epoch_ms".to_owned(), n(cmd.now_ms)),
            ("ttl_epoch_s".to_owned(), n(cmd.ttl_epoch_s)),
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
            None => Err(StoreError(format!(
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
            "#version = :expected AND (#status = :dlq OR #status = :failed)"
        } else {
            "#version = :expected AND #status = :dlq"
        };
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            condition,
            "#status = :queued, #attempt = #attempt + :one, #next_due_epoch_ms = :now, \
             #last_transition_key = :tk, #lease_expires_epoch_ms = :zero",
            EXECUTION_REMOVE_OUTCOME,
            vec![
                (":expected", n(expected_version)),
                (":dlq", status(ExecutionStatus::Dlq)),
                (":failed", status(ExecutionStatus::Failed)),
                (":queued", status(ExecutionStatus::Queued)),
                (":tk", s(transition_key)),
                (":zero", n(0)),
            ],
        )
    }

    /// A Scan with claimLease's filter, as TPF does: pages of `3 × limit`, stopping once
    /// `3 × limit` candidates are in hand, then sorted and cut to `limit`.
    fn get_execution_by_key(
        &self,
        tenant_id: &str,
        execution_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.execution_by_key(tenant_id, execution_key, now_ms)
    }

    fn find_due_executions(&self, now_ms: i64, limit: usize) -> StoreResult<Vec<ExecutionRecord>> {
        let wanted = limit.saturating_mul(3);
        let page = i32::try_from(wanted).unwrap_or(i32::MAX).clamp(1, 1000);
        let filter = format!("{CLAIMABLE} AND {TTL_OK}");
        let expressions = [filter.as_str()];
        let mut values = claimable_values();
        values.extend([(":now", n(now_ms)), (":now_s", n(now_ms.div_euclid(1000)))]);
        let values = values_for(&expressions, values);
        let names = names_for(&expressions);
        let mut due: Vec<ExecutionRecord> = Vec::new();
        let mut start: Option<SdkItem> = None;
        loop {
            let out = self
                .block(
                    self.client
                        .scan()
                        .table_name(&self.tables.execution)
                        .filter_expression(&filter)
                        .set_expression_attribute_names(Some(names.clone()))
                        .set_expression_attribute_values(values.clone())
                        .limit(page)
                        .consistent_read(true)
                        .set_exclusive_start_key(start.take())
                        .send(),
                )
                .map_err(|e| unavailable("Scan", &e))?;
            for item in out.items() {
                due.push(decode(item)?);
            }
            match out.last_evaluated_key() {
                Some(last) if !last.is_empty() && due.len() < wanted => start = Some(last.clone()),
                _ => break,
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
     #lease_expires_epoch_ms <= :now) AND NOT #status IN (:succeeded, :waiting_external, :failed, :dlq)";

fn claimable_values() -> Vec<(&'static str, AttributeValue)> {
    vec![
        (":succeeded", status(ExecutionStatus::Succeeded)),
        (
            ":waiting_external",
            status(ExecutionStatus::WaitingExternal),
        ),
        (":failed", status(ExecutionStatus::Failed)),
        (":dlq", status(ExecutionStatus::Dlq)),
    ]
}

impl AwaitStore for DynamoStore {
    fn create_or_get_unit(
        &self,
        unit: &AwaitUnitRecord,
        now_ms: i64,
    ) -> StoreResult<CreateOrGet<AwaitUnitRecord>> {
        let created = self.put_if(
            &self.tables.await_unit,
            to_sdk(&unit.to_item()),
            "(attribute_not_exists(#tenant_id) AND attribute_not_exists(#unit_id)) OR #ttl_epoch_s < :now_s",
            vec![(":now_s", n(now_ms.div_euclid(1000)))],
        )?;
        if created {
            return Ok(CreateOrGet {
                record: unit.clone(),
                duplicate: false,
            });
        }
        match self.get_unit(&unit.tenant_id, &unit.unit_id)? {
            Some(record) => Ok(CreateOrGet {
                record,
                duplicate: true,
            }),
            None => Err(StoreError(format!(
                "await unit {} was refused but cannot be read",
                unit.unit_id
            ))),
        }
    }

    fn get_unit(&self, tenant_id: &str, unit_id: &str) -> StoreResult<Option<AwaitUnitRecord>> {
        self.get(
            &self.tables.await_unit,
            vec![("tenant_id", s(tenant_id)), ("unit_id", s(unit_id))],
        )?
        .as_ref()
        .map(decode)
        .transpose()
    }

    fn record_item_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        item_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            "#status = :waiting AND NOT contains(#completed_item_keys, :key)",
            "SET #updated_at_epoch_ms = :now ADD #completed_item_count :one, #version :one, #completed_item_keys :keys",
            vec![
                (":key", s(item_key)),
                (":keys", AttributeValue::Ss(vec![item_key.to_owned()])),
            ],
        )
    }

    fn record_item_continuation_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        continuation_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            "(#status = :waiting OR #status = :completed) AND NOT contains(#completed_item_keys, :key)",
            "SET #updated_at_epoch_ms = :now ADD #version :one, #completed_item_keys :keys",
            vec![
                (":key", s(continuation_key)),
                (":keys", AttributeValue::Ss(vec![continuation_key.to_owned()])),
                (":completed", s(AwaitUnitStatus::Completed.as_str())),
            ],
        )
    }

    fn mark_dispatch_complete(
        &self,
        tenant_id: &str,
        unit_id: &str,
        expected_item_count: i64,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            "#status = :waiting",
            "SET #expected_item_count = :expected, #dispatch_complete = :true, \
             #updated_at_epoch_ms = :now, #version = #version + :one",
            vec![
                (":expected", n(expected_item_count)),
                (":true", AttributeValue::Bool(true)),
            ],
        )
    }

    fn complete_if_ready(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            "#status = :waiting AND #dispatch_complete = :true AND #completed_item_count >= #expected_item_count",
            "SET #status = :completed, #updated_at_epoch_ms = :now, #version = #version + :one",
            vec![
                (":true", AttributeValue::Bool(true)),
                (":completed", s(AwaitUnitStatus::Completed.as_str())),
            ],
        )
    }

    fn mark_unit_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.mark_unit_terminal(tenant_id, unit_id, AwaitUnitStatus::Completed, now_ms)
    }

    fn mark_unit_terminal(
        &self,
        tenant_id: &str,
        unit_id: &str,
        status: AwaitUnitStatus,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            "attribute_exists(#unit_id)",
            "SET #status = :status, #updated_at_epoch_ms = :now, #version = #version + :one",
            vec![(":status", s(status.as_str()))],
        )
    }

    fn create_or_get_interaction(
        &self,
        interaction: &AwaitInteractionRecord,
    ) -> StoreResult<CreateOrGet<AwaitInteractionRecord>> {
        let idempotency = ids::idempotency_lookup_key(
            &interaction.tenant_id,
            &interaction.step_id,
            &interaction.idempotency_key,
        );
        let correlation =
            ids::correlation_lookup_key(&interaction.tenant_id, &interaction.correlation_id);
        let items = vec![
            Self::conditional_put(
                &self.tables.await_interaction,
                interaction_item(interaction),
                "attribute_not_exists(#tenant_id) AND attribute_not_exists(#interaction_id)",
                Vec::new(),
            )?,
            Self::conditional_put(
                &self.tables.await_interaction_key,
                Self::lookup_item("idempotency", idempotency.clone(), interaction),
                "attribute_not_exists(#lookup_key)",
                Vec::new(),
            )?,
            Self::conditional_put(
                &self.tables.await_interaction_key,
                Self::lookup_item("correlation", correlation.clone(), interaction),
                "attribute_not_exists(#lookup_key)",
                Vec::new(),
            )?,
        ];
        if self.transact(items)? {
            return Ok(CreateOrGet {
                record: interaction.clone(),
                duplicate: false,
            });
        }
        let existing = match self.interaction_by_lookup(idempotency)? {
            Some(found) => Some(found),
            None => self.interaction_by_lookup(correlation)?,
        };
        existing
            .map(|record| CreateOrGet {
                record,
                duplicate: true,
            })
            .ok_or_else(|| {
                StoreError(format!(
                    "await interaction {} was refused but no duplicate is visible",
                    interaction.interaction_id
                ))
            })
    }

    fn get_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        self.get(
            &self.tables.await_interaction,
            vec![
                ("tenant_id", s(tenant_id)),
                ("interaction_id", s(interaction_id)),
            ],
        )?
        .as_ref()
        .map(decode)
        .transpose()
    }

    fn find_interaction_by_correlation(
        &self,
        tenant_id: &str,
        correlation_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        self.interaction_by_lookup(ids::correlation_lookup_key(tenant_id, correlation_id))
    }

    fn transition_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        expected_version: i64,
        status: AwaitInteractionStatus,
        response_payload: Option<&Value>,
        actor: Option<&str>,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        let mut update = String::from(
            "SET #status = :status, #version = #version + :one, #updated_at_epoch_ms = :now",
        );
        let mut values = vec![
            (":status", s(status.as_str())),
            (":one", n(1)),
            (":now", n(now_ms)),
            (":expected", n(expected_version)),
        ];
        if let Some(payload) = response_payload {
            update.push_str(", #response_payload_json = :response");
            values.push((":response", s(payload.to_string())));
        }
        if let Some(actor) = actor {
            update.push_str(", #actor = :actor");
            values.push((":actor", s(actor)));
        }
        if status.terminal() {
            let removed: Vec<String> = PENDING_INDEX_ATTRIBUTES
                .iter()
                .map(|a| format!("#{a}"))
                .collect();
            update.push_str(" REMOVE ");
            update.push_str(&removed.join(", "));
        }
        self.update(
            &self.tables.await_interaction,
            vec![
                ("tenant_id", s(tenant_id)),
                ("interaction_id", s(interaction_id)),
            ],
            Write {
                update,
                condition: "attribute_exists(#tenant_id) AND #version = :expected".to_owned(),
                values,
            },
        )
    }

    fn interactions_for_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let rows = self.query_all(
            &self.tables.await_interaction,
            Some(GSI_BY_UNIT),
            "#query_unit_key = :key",
            vec![(":key", s(unit_query_key(tenant_id, unit_id)))],
            true,
            None,
        )?;
        let mut found: Vec<AwaitInteractionRecord> =
            rows.iter().map(decode).collect::<StoreResult<_>>()?;
        // The index sorts by item index, causation, id; the SPI promises item index, then id.
        found.sort_by(|a, b| {
            (a.item_index.unwrap_or(u32::MAX), &a.interaction_id)
                .cmp(&(b.item_index.unwrap_or(u32::MAX), &b.interaction_id))
        });
        Ok(found)
    }

    /// The deadline index: `query_deadline_key = "active" AND query_deadline_sort <= "%019d(now)~"`,
    /// then TPF's non-terminal / TTL filter.
    fn find_timed_out(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let rows = self.query_all(
            &self.tables.await_interaction,
            Some(GSI_PENDING_BY_DEADLINE),
            "#query_deadline_key = :active AND #query_deadline_sort <= :upper",
            vec![
                (":active", s("active")),
                (":upper", s(format!("{now_ms:019}~"))),
            ],
            true,
            None,
        )?;
        let now_s = now_ms.div_euclid(1000);
        let mut found = Vec::new();
        for row in &rows {
            let record: AwaitInteractionRecord = decode(row)?;
            if !record.status.terminal()
                && record.deadline_epoch_ms.is_some_and(|d| d <= now_ms)
                && record.ttl_epoch_s > now_s
            {
                found.push(record);
            }
        }
        found.sort_by(|a, b| {
            deadline_sort(
                a.deadline_epoch_ms.unwrap_or(0),
                &a.tenant_id,
                &a.interaction_id,
            )
            .cmp(&deadline_sort(
                b.deadline_epoch_ms.unwrap_or(0),
                &b.tenant_id,
                &b.interaction_id,
            ))
        });
        found.truncate(limit);
        Ok(found)
    }

    fn pending_interactions(
        &self,
        tenant_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let rows = self.query_all(
            &self.tables.await_interaction,
            Some(GSI_PENDING_BY_TENANT),
            "#query_pending_tenant_key = :tenant",
            vec![(":tenant", s(tenant_id))],
            true,
            None,
        )?;
        let mut found = Vec::new();
        for row in &rows {
            let record: AwaitInteractionRecord = decode(row)?;
            if !record.status.terminal() {
                found.push(record);
            }
            if found.len() >= limit {
                break;
            }
        }
        Ok(found)
    }
}

impl ReleaseRegistry for DynamoStore {
    fn register_release(
        &self,
        release: &PipelineReleaseRecord,
    ) -> Result<PipelineReleaseRecord, RegistryError> {
        let mut stored = release.clone();
        stored.status = ReleaseStatus::Registered;
        stored.activated_at_epoch_ms = 0;
        let created = self.put_if(
            &self.tables.release,
            to_sdk(&stored.to_item()),
            "attribute_not_exists(#registry_key) AND attribute_not_exists(#registry_sort)",
            Vec::new(),
        )?;
        if created {
            return Ok(stored);
        }
        let existing = self
            .release_row(
                &release.tenant_id,
                &release.pipeline_id,
                &release.release_version,
            )?
            .ok_or_else(|| {
                RegistryError::Store(StoreError("release row refused but unreadable".into()))
            })?;
        if existing.same_immutable_metadata(release) {
            Ok(existing)
        } else {
            Err(RegistryError::Conflict(format!(
                "release {} of {} is already registered with different metadata",
                release.release_version, release.pipeline_id
            )))
        }
    }

    /// `ConditionCheck(release exists)` + `Put(activation event, attribute_not_exists)` in one
    /// transaction; a cancelled transaction with the release present is the same activation
    /// at the same instant, a no-op.
    fn activate_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
        now_ms: i64,
    ) -> Result<PipelineReleaseRecord, RegistryError> {
        let not_found =
            || RegistryError::NotFound(format!("release {release_version} of {pipeline_id}"));
        let event = ReleaseActivationEvent {
            tenant_id: tenant_id.to_owned(),
            pipeline_id: pipeline_id.to_owned(),
            release_version: release_version.to_owned(),
            activated_at_epoch_ms: now_ms,
        };
        let check = ConditionCheck::builder()
            .table_name(&self.tables.release)
            .key("registry_key", s(ids::registry_key(tenant_id, pipeline_id)))
            .key("registry_sort", s(ids::release_sort_key(release_version)))
            .condition_expression("attribute_exists(#registry_key)")
            .expression_attribute_names("#registry_key", "registry_key")
            .build()
            .map_err(|e| StoreError(e.to_string()))?;
        let items = vec![
            TransactWriteItem::builder().condition_check(check).build(),
            Self::conditional_put(
                &self.tables.release,
                to_sdk(&event.to_item()),
                "attribute_not_exists(#registry_key) AND attribute_not_exists(#registry_sort)",
                Vec::new(),
            )?,
        ];
        self.transact(items)?;
        let release = self
            .release_row(tenant_id, pipeline_id, release_version)?
            .ok_or_else(not_found)?;
        Ok(with_activation(release, now_ms))
    }

    fn active_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        let Some(event) = self.latest_activation(tenant_id, pipeline_id)? else {
            return Ok(None);
        };
        Ok(self
            .release_row(tenant_id, pipeline_id, &event.release_version)?
            .map(|release| with_activation(release, event.activated_at_epoch_ms)))
    }

    fn get_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        let Some(release) = self.release_row(tenant_id, pipeline_id, release_version)? else {
            return Ok(None);
        };
        match self.latest_activation(tenant_id, pipeline_id)? {
            Some(event) if event.release_version == release_version => {
                Ok(Some(with_activation(release, event.activated_at_epoch_ms)))
            }
            _ => Ok(Some(release)),
        }
    }

    fn activation_events(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Vec<ReleaseActivationEvent>> {
        self.query_all(
            &self.tables.release,
            None,
            "#registry_key = :rk AND begins_with(#registry_sort, :prefix)",
            vec![
                (":rk", s(ids::registry_key(tenant_id, pipeline_id))),
                (":prefix", s("activation:")),
            ],
            true,
            None,
        )?
        .iter()
        .map(decode)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_whole_tokens() {
        let found = placeholders(&["#a = :now AND #b <= :now_s", "SET #a = :now"], ':');
        assert_eq!(found, vec![":now", ":now_s"]);
        let names = names_for(&["#status IN (:x) AND attribute_exists(#tenant_id)"]);
        assert_eq!(names.get("#status").map(String::as_str), Some("status"));
        assert_eq!(names.len(), 2);
        assert!(values_for(&["#a = :b"], vec![(":c", n(1))]).is_none());
    }
}
