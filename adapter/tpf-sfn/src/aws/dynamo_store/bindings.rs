//! TPF's callback-binding table (`AwsDurableCallbackBindingRepository`) behind the model's
//! [`BindingStore`], for `serve --store dynamodb`'s gateway: every write a put conditioned on
//! the key being free (a taken key re-read and settled as TPF settles it), every read
//! consistent, rows in TPF's attributes (`tpf_wire::gateway::items`), so TPF's own functions
//! and the wake-up read what the host writes.

use tpf_model::gateway::{settle_taken_key, BindingStore, Delivery};
use tpf_model::store::StoreError;
use tpf_wire::gateway::binding::{attr, CallbackBinding, CallbackRegistration, RowType};
use tpf_wire::gateway::names::{
    binding_partition_key, delivered_sort_key, generation_sort_key, prefix,
    registration_partition_key, registration_sort_key,
};
use tpf_wire::java_error::JavaError;
use tpf_wire::records::Item;

use super::{DynamoStore, KeyQuery};
use crate::aws::dynamo_item::{from_sdk, s, to_sdk};

/// `attribute_not_exists(pk) AND attribute_not_exists(sk)`: TPF's condition on every write.
const KEY_FREE: &str = "attribute_not_exists(#pk) AND attribute_not_exists(#sk)";
const LATEST: &str = "#pk = :pk AND begins_with(#sk, :prefix)";

/// The table on DynamoDB, through the store's client, runtime and bounds.
#[derive(Debug, Clone)]
pub struct DynamoBindings {
    store: DynamoStore,
    table: String,
}

/// A store failure as the gateway's function error: the exception TPF's repository lets
/// through (the AWS SDK's) is an unchecked exception out of the handler; its message says what
/// failed.
fn java(e: StoreError) -> JavaError {
    JavaError::illegal_state(crate::error::chain(&e))
}

impl DynamoBindings {
    pub fn new(store: DynamoStore, table: impl Into<String>) -> Self {
        Self {
            store,
            table: table.into(),
        }
    }

    fn row(&self, pk: String, sk: String) -> Result<Option<Item>, JavaError> {
        let key = vec![(attr::PK, s(pk)), (attr::SK, s(sk))];
        Ok(self
            .store
            .get(&self.table, key)
            .map_err(java)?
            .as_ref()
            .map(from_sdk))
    }

    fn latest(&self, pk: String, sk_prefix: &str) -> Result<Option<Item>, JavaError> {
        let q = KeyQuery {
            table: &self.table,
            index: None,
            condition: LATEST,
            values: vec![(":pk", s(pk)), (":prefix", s(sk_prefix))],
            forward: false,
        };
        let out = self
            .store
            .block(self.store.query(q).consistent_read(true).limit(1).send())
            .map_err(|e| java(super::unavailable("Query", e)))?;
        Ok(out.items().first().map(from_sdk))
    }

    /// The conditional put; `Err(row)` with the row found when the key was taken.
    fn put_if_free(&self, item: Item) -> Result<Result<(), Option<Item>>, JavaError> {
        let pk = text(&item, attr::PK);
        let sk = text(&item, attr::SK);
        if self
            .store
            .put_if(&self.table, to_sdk(&item), KEY_FREE, Vec::new())
            .map_err(java)?
        {
            return Ok(Ok(()));
        }
        Ok(Err(self.row(pk, sk)?))
    }
}

fn text(item: &Item, name: &str) -> String {
    match item.get(name) {
        Some(tpf_wire::records::AttrValue::S(v)) => v.clone(),
        _ => String::new(),
    }
}

impl BindingStore for DynamoBindings {
    fn register(&mut self, registration: &CallbackRegistration) -> Result<bool, JavaError> {
        match self.put_if_free(registration.to_item())? {
            Ok(()) => Ok(true),
            Err(found) => {
                let existing = found
                    .as_ref()
                    .and_then(|i| CallbackRegistration::from_item(i).ok());
                settle_taken_key(RowType::Registration, existing.as_ref(), |e| {
                    e.same_authority(registration)
                })
            }
        }
    }

    fn find_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        self.row(
            registration_partition_key(tenant_id, execution_id),
            registration_sort_key(generation)?,
        )?
        .as_ref()
        .map(CallbackRegistration::from_item)
        .transpose()
    }

    fn find_latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        self.latest(
            registration_partition_key(tenant_id, execution_id),
            prefix::REGISTRATION,
        )?
        .as_ref()
        .map(CallbackRegistration::from_item)
        .transpose()
    }

    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        match self.put_if_free(binding.to_item())? {
            Ok(()) => Ok(true),
            Err(found) => {
                let existing = found.as_ref().and_then(CallbackBinding::decode);
                settle_taken_key(RowType::Binding, existing.as_ref(), |e| {
                    e.same_authority(binding)
                })
            }
        }
    }

    fn find_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        self.row(
            binding_partition_key(tenant_id, interaction_id),
            generation_sort_key(generation)?,
        )?
        .as_ref()
        .map(CallbackBinding::from_item)
        .transpose()
    }

    fn find_latest_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        self.latest(
            binding_partition_key(tenant_id, interaction_id),
            prefix::GENERATION,
        )?
        .as_ref()
        .map(CallbackBinding::from_item)
        .transpose()
    }

    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        Ok(self
            .row(
                binding.partition_key(),
                delivered_sort_key(binding.await_identity.generation),
            )?
            .is_some())
    }

    fn record_delivered(
        &mut self,
        binding: &CallbackBinding,
        delivery: Delivery,
    ) -> Result<(), JavaError> {
        let item = binding.delivery_item(
            &delivery.provider_outcome,
            delivery.delivered_at_epoch_ms,
            &delivery.attempt_id,
        );
        // Delivery evidence is immutable: the first write stands, a second is no error.
        self.put_if_free(item).map(|_| ())
    }
}
