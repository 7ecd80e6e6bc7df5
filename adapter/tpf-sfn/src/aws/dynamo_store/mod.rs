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

mod awaits;
mod bindings;
mod execution;
mod expression;
mod registry;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, Put, ReturnValue, TransactWriteItem};
use aws_sdk_dynamodb::Client;
use tokio::runtime::Handle;
use tpf_model::store::{StoreError, StoreResult};
use tpf_wire::records::DynamoItem;

use super::dynamo_item::{from_sdk, SdkItem};
use super::tables::TableNames;
pub use bindings::{DynamoBindings, DynamoRows};
use expression::{names_for, values_for, Write};

/// Every store trait over DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoStore {
    client: Client,
    tables: TableNames,
    runtime: Handle,
}

fn unavailable<E, R>(operation: &str, e: SdkError<E, R>) -> StoreError
where
    E: std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    StoreError::caused_by(operation, e)
}

fn decode<T: DynamoItem>(item: &SdkItem) -> StoreResult<T> {
    T::from_item(&from_sdk(item))
        .map_err(|e| StoreError::caused_by(format!("{} row does not decode", T::TABLE), e))
}

/// One key-condition query: the table or index, the condition and its values, the order.
struct KeyQuery<'a> {
    table: &'a str,
    index: Option<&'a str>,
    condition: &'a str,
    values: Vec<(&'static str, AttributeValue)>,
    forward: bool,
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
            .map_err(|e| unavailable("GetItem", e))?;
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
            Err(e) => Err(unavailable("UpdateItem", e)),
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
            Err(e) => Err(unavailable("PutItem", e)),
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
            Err(e) => Err(unavailable("TransactWriteItems", e)),
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
            .map_err(|e| StoreError::caused_by("building a conditional put", e))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    fn query(&self, q: KeyQuery<'_>) -> QueryFluentBuilder {
        let expressions = [q.condition];
        self.client
            .query()
            .table_name(q.table)
            .set_index_name(q.index.map(str::to_owned))
            .key_condition_expression(q.condition)
            .set_expression_attribute_names(Some(names_for(&expressions)))
            .set_expression_attribute_values(values_for(&expressions, q.values))
            .scan_index_forward(q.forward)
    }

    /// Every item on every page, through the SDK's paginator.
    fn query_all(&self, q: KeyQuery<'_>) -> StoreResult<Vec<SdkItem>> {
        let items = self.query(q).into_paginator().items().send();
        self.block(items.collect::<Result<Vec<_>, _>>())
            .map_err(|e| unavailable("Query", e))
    }

    /// The first item in the query's order (a one-item page: nothing after it is read).
    fn query_first(&self, q: KeyQuery<'_>) -> StoreResult<Option<SdkItem>> {
        let out = self
            .block(self.query(q).limit(1).send())
            .map_err(|e| unavailable("Query", e))?;
        Ok(out.items().first().cloned())
    }
}
