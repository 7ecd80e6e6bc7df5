//! TPF's callback-binding table behind a trait (`AwsDurableCallbackBindingRepository`): every
//! write is a put conditioned on the key being free; a taken key is re-read, an identical
//! authority answers `false`, any other is TPF's conflict. [`InMemoryBindings`] keeps the rows
//! in a map; a DynamoDB implementation sends the same conditional puts and reuses
//! [`settle_taken_key`].

use std::collections::BTreeMap;

use tpf_wire::gateway::binding::{conflict, CallbackBinding, CallbackRegistration, RowType};
use tpf_wire::gateway::names::{
    binding_partition_key, delivered_sort_key, generation_sort_key, prefix,
    registration_partition_key, registration_sort_key,
};
use tpf_wire::java_error::JavaError;

/// A DELIVERY row: the evidence that a generation's callback was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub provider_callback_id: String,
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

#[derive(Debug, Clone, PartialEq)]
enum Row {
    Registration(CallbackRegistration),
    Binding(CallbackBinding),
    Delivery(Delivery),
}

/// The binding table in memory, keyed `(pk, sk)` as TPF's table is.
#[derive(Debug, Default, Clone)]
pub struct InMemoryBindings {
    rows: BTreeMap<(String, String), Row>,
}

impl InMemoryBindings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every row's `(pk, sk, record_type)`, in key order.
    pub fn keys(&self) -> Vec<(String, String, RowType)> {
        self.rows
            .iter()
            .map(|((pk, sk), row)| {
                let t = match row {
                    Row::Registration(_) => RowType::Registration,
                    Row::Binding(_) => RowType::Binding,
                    Row::Delivery(_) => RowType::Delivery,
                };
                (pk.clone(), sk.clone(), t)
            })
            .collect()
    }

    fn latest(&self, pk: &str, sk_prefix: &str) -> Option<&Row> {
        self.rows
            .range((pk.to_owned(), sk_prefix.to_owned())..)
            .take_while(|((p, s), _)| p == pk && s.starts_with(sk_prefix))
            .last()
            .map(|(_, row)| row)
    }
}

impl BindingStore for InMemoryBindings {
    fn register(&mut self, registration: &CallbackRegistration) -> Result<bool, JavaError> {
        let key = (registration.partition_key(), registration.sort_key());
        match self.rows.get(&key) {
            None => {
                self.rows
                    .insert(key, Row::Registration(registration.clone()));
                Ok(true)
            }
            Some(Row::Registration(existing)) => settle_taken_key(
                RowType::Registration,
                Some(existing),
                |e: &CallbackRegistration| e.same_authority(registration),
            ),
            Some(_) => {
                settle_taken_key::<CallbackRegistration>(RowType::Registration, None, |_| false)
            }
        }
    }

    fn find_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        let key = (
            registration_partition_key(tenant_id, execution_id),
            registration_sort_key(generation)?,
        );
        Ok(match self.rows.get(&key) {
            Some(Row::Registration(r)) => Some(r.clone()),
            _ => None,
        })
    }

    fn find_latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        let pk = registration_partition_key(tenant_id, execution_id);
        Ok(match self.latest(&pk, prefix::REGISTRATION) {
            Some(Row::Registration(r)) => Some(r.clone()),
            _ => None,
        })
    }

    fn bind(&mut self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        let key = (binding.partition_key(), binding.sort_key());
        match self.rows.get(&key) {
            None => {
                self.rows.insert(key, Row::Binding(binding.clone()));
                Ok(true)
            }
            Some(Row::Binding(existing)) => {
                settle_taken_key(RowType::Binding, Some(existing), |e: &CallbackBinding| {
                    e.same_authority(binding)
                })
            }
            Some(_) => settle_taken_key::<CallbackBinding>(RowType::Binding, None, |_| false),
        }
    }

    fn find_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        let key = (
            binding_partition_key(tenant_id, interaction_id),
            generation_sort_key(generation)?,
        );
        Ok(match self.rows.get(&key) {
            Some(Row::Binding(b)) => Some(b.clone()),
            _ => None,
        })
    }

    fn find_latest_binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        let pk = binding_partition_key(tenant_id, interaction_id);
        Ok(match self.latest(&pk, prefix::GENERATION) {
            Some(Row::Binding(b)) => Some(b.clone()),
            _ => None,
        })
    }

    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        let key = (
            binding.partition_key(),
            delivered_sort_key(binding.await_identity.generation),
        );
        Ok(self.rows.contains_key(&key))
    }

    fn record_delivered(
        &mut self,
        binding: &CallbackBinding,
        delivery: Delivery,
    ) -> Result<(), JavaError> {
        let key = (
            binding.partition_key(),
            delivered_sort_key(binding.await_identity.generation),
        );
        // Delivery evidence is immutable: the first write stands.
        self.rows.entry(key).or_insert(Row::Delivery(delivery));
        Ok(())
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
            provider_callback_id: "cb-1".into(),
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
            .filter(|(_, _, t)| *t == RowType::Delivery)
            .collect();
        assert_eq!(deliveries.len(), 1);
        assert_eq!(deliveries[0].1, "DELIVERED#1");
    }
}
