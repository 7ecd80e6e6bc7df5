//! TPF's callback-binding table on DynamoDB, read and written as TPF's repository does: reads
//! are consistent (a row the wake-up just wrote is seen), every write is a put conditioned on
//! its key being free, and nothing is updated or deleted.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;
use tpf_wire::gateway::binding::{
    self as table, attr, CallbackBinding, CallbackRegistration, DeliveryOutcome, RowType,
};
use tpf_wire::gateway::names::{
    binding_partition_key, delivered_sort_key, prefix, registration_partition_key,
};
use tpf_wire::java_error::JavaError;
use tpf_wire::records::Item;

use crate::aws::errors::{self, Kind};
use crate::aws::item::{from_sdk, to_sdk};
use crate::error::Error;

/// Items per page of the provider-ARN index, and the most pages a lookup reads (TPF's bounded
/// lookup: a registration hidden behind more BINDING rows than that is an error, not a miss).
const INDEX_PAGE: i32 = 25;
const INDEX_PAGES: usize = 8;

fn failed<E, R>(operation: &str, e: SdkError<E, R>) -> Error
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    errors::from_sdk(super::SCOPE, operation, e, |_| None)
}

/// A row TPF's reader refuses.
fn unreadable(what: &str, e: JavaError) -> Error {
    Error::new(
        "GATEWAY_HOST_ROW",
        format!("a {what} row of the callback-binding table is malformed"),
    )
    .with_source(e)
    .with_hint(
        "the table is written only by TPF's gateway and this host: look at who else writes it",
    )
}

fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_owned())
}

/// The table, by name.
#[derive(Debug, Clone)]
pub struct BindingTable {
    ddb: aws_sdk_dynamodb::Client,
    table: String,
}

impl BindingTable {
    pub fn new(ddb: aws_sdk_dynamodb::Client, table: &str) -> Self {
        Self {
            ddb,
            table: table.to_owned(),
        }
    }

    pub fn name(&self) -> &str {
        &self.table
    }

    async fn get(&self, pk: &str, sk: &str) -> Result<Option<Item>, Error> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.table)
            .key(attr::PK, s(pk))
            .key(attr::SK, s(sk))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem (binding table)", e))?;
        Ok(out.item().map(from_sdk))
    }

    /// The row of `pk` with the highest sort key under `prefix` (the sort keys' 20-digit
    /// generations order as numbers).
    async fn newest(&self, pk: &str, sk_prefix: &str) -> Result<Option<Item>, Error> {
        let out = self
            .ddb
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            .expression_attribute_names("#pk", attr::PK)
            .expression_attribute_names("#sk", attr::SK)
            .expression_attribute_values(":pk", s(pk))
            .expression_attribute_values(":prefix", s(sk_prefix))
            .scan_index_forward(false)
            .limit(1)
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("Query (binding table)", e))?;
        Ok(out.items().first().map(from_sdk))
    }

    /// The newest REGISTRATION of (tenant, execution).
    pub async fn latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, Error> {
        let pk = registration_partition_key(tenant_id, execution_id);
        self.newest(&pk, prefix::REGISTRATION)
            .await?
            .map(|item| {
                CallbackRegistration::from_item(&item).map_err(|e| unreadable("REGISTRATION", e))
            })
            .transpose()
    }

    /// The BINDING of (tenant, interaction, generation).
    pub async fn binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, Error> {
        let Ok(sk) = tpf_wire::gateway::names::generation_sort_key(generation) else {
            return Ok(None);
        };
        let pk = binding_partition_key(tenant_id, interaction_id);
        self.get(&pk, &sk)
            .await?
            .map(|item| CallbackBinding::from_item(&item).map_err(|e| unreadable("BINDING", e)))
            .transpose()
    }

    /// The generation of the newest BINDING of (tenant, interaction).
    pub async fn latest_binding_generation(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<i64>, Error> {
        let pk = binding_partition_key(tenant_id, interaction_id);
        self.newest(&pk, prefix::GENERATION)
            .await?
            .map(|item| {
                CallbackBinding::from_item(&item)
                    .map(|b| b.await_identity.generation)
                    .map_err(|e| unreadable("BINDING", e))
            })
            .transpose()
    }

    /// Whether the binding's generation has its `DELIVERED#<generation>` row.
    pub async fn delivered(&self, binding: &CallbackBinding) -> Result<bool, Error> {
        let sk = delivered_sort_key(binding.await_identity.generation);
        Ok(self.get(&binding.partition_key(), &sk).await?.is_some())
    }

    /// The REGISTRATION whose `provider_execution_arn` is this driver execution's, through the
    /// `provider-execution-index` (eventually consistent, as every index is: a registration
    /// not visible yet is retried by the caller). BINDING rows share the ARN and are filtered
    /// out; of several registrations the highest generation wins.
    pub async fn registration_by_provider_arn(
        &self,
        provider_execution_arn: &str,
    ) -> Result<Option<CallbackRegistration>, Error> {
        let mut start: Option<std::collections::HashMap<String, AttributeValue>> = None;
        let mut found: Option<CallbackRegistration> = None;
        for _ in 0..INDEX_PAGES {
            let out = self
                .ddb
                .query()
                .table_name(&self.table)
                .index_name(table::PROVIDER_EXECUTION_INDEX)
                .key_condition_expression("#arn = :arn")
                .filter_expression("#type = :registration")
                .expression_attribute_names("#arn", attr::PROVIDER_EXECUTION_ARN)
                .expression_attribute_names("#type", attr::RECORD_TYPE)
                .expression_attribute_values(":arn", s(provider_execution_arn))
                .expression_attribute_values(":registration", s(RowType::Registration.as_str()))
                .limit(INDEX_PAGE)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| failed("Query (provider-execution-index)", e))?;
            for item in out.items() {
                let registration = CallbackRegistration::from_item(&from_sdk(item))
                    .map_err(|e| unreadable("REGISTRATION", e))?;
                if found
                    .as_ref()
                    .is_none_or(|f| f.checkpoint.generation < registration.checkpoint.generation)
                {
                    found = Some(registration);
                }
            }
            match out.last_evaluated_key() {
                Some(key) if !key.is_empty() => start = Some(key.clone()),
                _ => return Ok(found),
            }
        }
        Err(Error::new(
            "GATEWAY_HOST_LOOKUP_BUDGET",
            format!(
                "the registration of {provider_execution_arn} is not within {INDEX_PAGES} pages of the provider-execution-index"
            ),
        )
        .with_hint("the driver execution has more bindings than TPF's bounded lookup reads: look at why it bound so many"))
    }

    /// A put conditioned on the key being free: `false` when the key is taken.
    async fn put_new(&self, item: &Item) -> Result<bool, Error> {
        let result = self
            .ddb
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_sdk(item)))
            .condition_expression("attribute_not_exists(#pk) AND attribute_not_exists(#sk)")
            .expression_attribute_names("#pk", attr::PK)
            .expression_attribute_names("#sk", attr::SK)
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(errors::from_sdk(
                super::SCOPE,
                "PutItem (binding table)",
                e,
                |e| {
                    e.is_provisioned_throughput_exceeded_exception()
                        .then_some(Kind::Throttled)
                },
            )),
        }
    }

    /// Writes the BINDING; an identical row already there counts as written (`false`), another
    /// authority's row is TPF's conflict (`GATEWAY_HOST_BINDING_CONFLICT`).
    pub async fn put_binding(&self, binding: &CallbackBinding) -> Result<bool, Error> {
        if self.put_new(&binding.to_item()).await? {
            return Ok(true);
        }
        let i = &binding.await_identity;
        let existing = self
            .binding(&i.tenant_id, &i.interaction_id, i.generation)
            .await?;
        match existing {
            Some(row) if row.same_authority(binding) => Ok(false),
            _ => Err(Error::new(
                "GATEWAY_HOST_BINDING_CONFLICT",
                format!(
                    "the BINDING {} {} is held by another callback",
                    binding.partition_key(),
                    binding.sort_key()
                ),
            )
            .with_source(table::conflict(RowType::Binding))
            .with_hint(
                "two drivers claim one generation of the interaction: look at both registrations",
            )),
        }
    }

    /// Writes the DELIVERY row of the binding's generation; a row already there is the same
    /// evidence and no error.
    pub async fn put_delivery(
        &self,
        binding: &CallbackBinding,
        outcome: DeliveryOutcome,
        delivered_at_epoch_ms: i64,
        attempt_id: &str,
    ) -> Result<bool, Error> {
        self.put_new(&binding.delivery_item(outcome.as_str(), delivered_at_epoch_ms, attempt_id))
            .await
    }
}
