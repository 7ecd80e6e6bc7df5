//! TPF's callback-binding table behind a trait (`AwsDurableCallbackBindingRepository`): every
//! write is a put conditioned on the key being free; a taken key is re-read, an identical
//! authority answers `false`, any other is TPF's conflict. [`Table`] writes TPF's repository
//! calls once over three row operations ([`BindingRows`]: a read by key, the newest row under a
//! prefix, the conditional put); [`InMemoryBindings`] keeps the rows in a map, and a DynamoDB
//! implementation sends the same operations to the table.

use std::collections::BTreeMap;

use tpf_wire::gateway::binding::{attr, conflict, CallbackBinding, CallbackRegistration, RowType};
use tpf_wire::gateway::names::{
    binding_partition_key, delivered_sort_key, generation_sort_key, prefix,
    registration_partition_key, registration_sort_key,
};
use tpf_wire::java_error::JavaError;
use tpf_wire::records::{AttrValue, Item};

/// A DELIVERY row: the evidence that a generation's callback was answered (the callback id is
/// the binding's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub provider_outcome: String,
    pub delivered_at_epoch_ms: i64,
    pub attempt_id: String,
}

pub trait BindingStore {
    /// Writes a REGISTRATION row; `false` when an identical one exists.
    fn register(&mut self, registration: &CallbackRegistration) -> Result<bool, JavaError>;

    /// The REGISTRATION of one generation (a consistent read).
    fn find_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackRegistration>, JavaError>;

    /// The newest REGISTRATION of an execution.
    fn find_latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError>;

    /// Writes a BINDING row; `false` when an identical one exists.
    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError>;

    /// The BINDING of one interaction's generation.
    fn find_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, JavaError>;

    /// The newest BINDING of an interaction.
    fn find_latest_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<CallbackBinding>, JavaError>;

    /// Whether a DELIVERY row exists for the binding's generation.
    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, JavaError>;

    /// Writes the DELIVERY row once; a second write of the same generation is a no-op.
    fn record_delivered(
        &mut self,
        binding: &CallbackBinding,
        delivery: Delivery,
    ) -> Result<(), JavaError>;
}

/// A table a longer-lived host owns, lent to one gateway call.
impl<B: BindingStore + ?Sized> BindingStore for &mut B {
    fn register(&mut self, registration: &CallbackRegistration) -> Result<bool, JavaError> {
        (**self).register(registration)
    }

    fn find_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        (**self).find_registration(tenant_id, execution_id, generation)
    }

    fn find_latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        (**self).find_latest_registration(tenant_id, execution_id)
    }

    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        (**self).bind(binding)
    }

    fn find_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        (**self).find_binding(tenant_id, interaction_id, generation)
    }

    fn find_latest_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        (**self).find_latest_binding(tenant_id, interaction_id)
    }

    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        (**self).delivered(binding)
    }

    fn record_delivered(
        &mut self,
        binding: &CallbackBinding,
        delivery: Delivery,
    ) -> Result<(), JavaError> {
        (**self).record_delivered(binding, delivery)
    }
}

/// What a put whose key was taken answers, given the row found there: the same authority is
/// `false` (nothing written), another is TPF's conflict. A row that vanished between the failed
/// put and the read is a conflict too (TPF rethrows the conditional failure).
pub fn settle_taken_key<T>(
    row: RowType,
    existing: Option<&T>,
    same_authority: impl Fn(&T) -> bool,
) -> Result<bool, JavaError> {
    match existing {
        Some(e) if same_authority(e) => Ok(false),
        _ => Err(conflict(row)),
    }
}

/// The row operations TPF's repository is written over: rows are TPF's items, keyed by their
/// `pk` and `sk` attributes.
pub trait BindingRows {
    /// The row under `(pk, sk)`, read consistently.
    fn row(&self, pk: &str, sk: &str) -> Result<Option<Item>, JavaError>;

    /// The newest row under `pk` whose sort key starts with `sk_prefix` (a consistent,
    /// descending query with `Limit 1`).
    fn newest(&self, pk: &str, sk_prefix: &str) -> Result<Option<Item>, JavaError>;

    /// A put conditioned on the item's key being free.
    fn put_if_free(&mut self, item: Item) -> Result<Put, JavaError>;
}

/// What a conditional put did.
#[derive(Debug, Clone, PartialEq)]
pub enum Put {
    Written,
    /// The key was taken: the row read back there (`None` when it vanished in between).
    Taken(Option<Item>),
}

/// TPF's binding repository over a table's rows.
#[derive(Debug, Default, Clone)]
pub struct Table<R>(pub R);

impl<R: BindingRows> BindingStore for Table<R> {
    fn register(&mut self, registration: &CallbackRegistration) -> Result<bool, JavaError> {
        match self.0.put_if_free(registration.to_item())? {
            Put::Written => Ok(true),
            Put::Taken(found) => {
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
        let pk = registration_partition_key(tenant_id, execution_id);
        self.0
            .row(&pk, &registration_sort_key(generation)?)?
            .as_ref()
            .map(CallbackRegistration::from_item)
            .transpose()
    }

    fn find_latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        let pk = registration_partition_key(tenant_id, execution_id);
        self.0
            .newest(&pk, prefix::REGISTRATION)?
            .as_ref()
            .map(CallbackRegistration::from_item)
            .transpose()
    }

    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        match self.0.put_if_free(binding.to_item())? {
            Put::Written => Ok(true),
            Put::Taken(found) => {
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
        let pk = binding_partition_key(tenant_id, interaction_id);
        self.0
            .row(&pk, &generation_sort_key(generation)?)?
            .as_ref()
            .map(CallbackBinding::from_item)
            .transpose()
    }

    fn find_latest_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        let pk = binding_partition_key(tenant_id, interaction_id);
        self.0
            .newest(&pk, prefix::GENERATION)?
            .as_ref()
            .map(CallbackBinding::from_item)
            .transpose()
    }

    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        let sk = delivered_sort_key(binding.await_identity.generation);
        Ok(self.0.row(&binding.partition_key(), &sk)?.is_some())
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
        self.0.put_if_free(item).map(|_| ())
    }
}

/// The binding table in memory: TPF's items keyed `(pk, sk)`, written and read through the
/// wire's item mapping, so a row here is a row TPF's repository reads.
pub type InMemoryBindings = Table<MemoryRows>;

#[derive(Debug, Default, Clone)]
pub struct MemoryRows {
    rows: BTreeMap<(String, String), Item>,
}

fn text_attr<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    match item.get(name) {
        Some(AttrValue::S(v)) => Some(v),
        _ => None,
    }
}

impl InMemoryBindings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every row's `(pk, sk, record_type)`, in key order.
    pub fn keys(&self) -> Vec<(String, String, String)> {
        self.0
            .rows
            .iter()
            .map(|((pk, sk), item)| {
                let t = text_attr(item, attr::RECORD_TYPE).unwrap_or_default();
                (pk.clone(), sk.clone(), t.to_owned())
            })
            .collect()
    }

    /// Every item, in key order (what a scan, or the table's stream, would show).
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.0.rows.values()
    }
}

impl BindingRows for MemoryRows {
    fn row(&self, pk: &str, sk: &str) -> Result<Option<Item>, JavaError> {
        Ok(self.rows.get(&(pk.to_owned(), sk.to_owned())).cloned())
    }

    fn newest(&self, pk: &str, sk_prefix: &str) -> Result<Option<Item>, JavaError> {
        Ok(self
            .rows
            .range((pk.to_owned(), sk_prefix.to_owned())..)
            .take_while(|((p, s), _)| p == pk && s.starts_with(sk_prefix))
            .last()
            .map(|(_, item)| item.clone()))
    }

    fn put_if_free(&mut self, item: Item) -> Result<Put, JavaError> {
        let key = (
            text_attr(&item, attr::PK).unwrap_or_default().to_owned(),
            text_attr(&item, attr::SK).unwrap_or_default().to_owned(),
        );
        if let Some(found) = self.rows.get(&key) {
            return Ok(Put::Taken(Some(found.clone())));
        }
        self.rows.insert(key, item);
        Ok(Put::Written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpf_wire::gateway::binding::{BindingStatus, ProviderFields};
    use tpf_wire::gateway::{AwaitIdentity, DriverCheckpoint, ExecutionCheckpoint};

    fn registration(generation: i64, callback: &str) -> CallbackRegistration {
        let ex = ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r"))
            .unwrap();
        CallbackRegistration::new(
            DriverCheckpoint::new(ex, generation).unwrap(),
            ProviderFields::new(Some("tpf-n"), Some("arn"), Some(callback)).unwrap(),
            1_000,
            9_000,
        )
        .unwrap()
    }

    fn identity(generation: i64) -> AwaitIdentity {
        AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), generation).unwrap()
    }

    #[test]
    fn registrations_are_written_once_and_the_newest_generation_sorts_last() {
        let mut b = InMemoryBindings::new();
        assert!(b.register(&registration(1, "cb-1")).unwrap());
        assert!(!b.register(&registration(1, "cb-1")).unwrap());
        assert_eq!(
            b.register(&registration(1, "cb-x")).unwrap_err().message,
            "callback registration generation is already owned by another callback"
        );
        assert!(b.register(&registration(10, "cb-10")).unwrap());
        assert!(b.register(&registration(2, "cb-2")).unwrap());
        let latest = b.find_latest_registration("t", "e").unwrap().unwrap();
        assert_eq!(
            latest.checkpoint.generation, 10,
            "20-digit keys sort numerically"
        );
        assert_eq!(
            b.find_registration("t", "e", 2)
                .unwrap()
                .unwrap()
                .provider
                .callback_id,
            "cb-2"
        );
        assert!(b.find_registration("t", "e", 3).unwrap().is_none());
    }

    #[test]
    fn bindings_conflict_on_another_callback_and_deliveries_stand_once() {
        let mut b = InMemoryBindings::new();
        let bound = registration(1, "cb-1").bind(&identity(1)).unwrap();
        assert!(b.bind(&bound).unwrap());
        assert!(!b.bind(&bound).unwrap());
        let other = registration(1, "cb-2").bind(&identity(1)).unwrap();
        assert_eq!(
            b.bind(&other).unwrap_err().message,
            "callback binding generation is already owned by another callback"
        );
        let second = registration(2, "cb-2").bind(&identity(2)).unwrap();
        assert!(b.bind(&second).unwrap());
        let latest = b.find_latest_binding("t", "i").unwrap().unwrap();
        assert_eq!(
            (latest.await_identity.generation, latest.status),
            (2, BindingStatus::Open)
        );

        assert!(!b.delivered(&bound).unwrap());
        let delivery = |outcome: &str| Delivery {
            provider_outcome: outcome.into(),
            delivered_at_epoch_ms: 5,
            attempt_id: "a".into(),
        };
        b.record_delivered(&bound, delivery("CALLBACK_ACCEPTED"))
            .unwrap();
        b.record_delivered(&bound, delivery("PROVIDER_STATE_SUCCEEDED"))
            .unwrap();
        assert!(b.delivered(&bound).unwrap() && !b.delivered(&second).unwrap());
        let deliveries: Vec<_> = b
            .keys()
            .into_iter()
            .filter(|(_, _, t)| t == "DELIVERY")
            .collect();
        assert_eq!(deliveries.len(), 1);
        assert_eq!(deliveries[0].1, "DELIVERED#1");
    }
}
