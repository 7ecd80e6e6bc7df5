//! The callback-binding table's rows as DynamoDB items, attribute for attribute as TPF's
//! repository writes and reads them (`toItem`, `fromItem`, `registrationFromItem`,
//! `recordDelivered`). Reading follows TPF: a missing attribute, or one of the wrong type, is
//! `IllegalStateException("binding attribute is missing: <name>")`, a blank text the record
//! rule's `IllegalArgumentException`, a number that is not a Java long a
//! `NumberFormatException`, then the records' own constructors decide.

use super::binding::{
    attr, BindingStatus, CallbackBinding, CallbackRegistration, ProviderFields, RowType,
};
use super::names::delivered_sort_key;
use super::records::{AwaitIdentity, DriverCheckpoint, ExecutionCheckpoint};
use super::validation::required;
use crate::java_error::JavaError;
use crate::records::{AttrValue, Item};

const NUMBER_FORMAT: &str = "java.lang.NumberFormatException";

fn s(item: &mut Item, name: &str, value: &str) {
    item.insert(name.to_owned(), AttrValue::S(value.to_owned()));
}

fn n(item: &mut Item, name: &str, value: i64) {
    item.insert(name.to_owned(), AttrValue::N(value.to_string()));
}

fn missing(name: &str) -> JavaError {
    JavaError::illegal_state(format!("binding attribute is missing: {name}"))
}

/// `text(item, name)`: an S attribute, not blank.
fn text(item: &Item, name: &str) -> Result<String, JavaError> {
    match item.get(name) {
        Some(AttrValue::S(v)) => Ok(required(Some(v), name)?.to_owned()),
        _ => Err(missing(name)),
    }
}

/// `longValue(item, name)`: an N attribute, parsed as a Java long.
fn long(item: &Item, name: &str) -> Result<i64, JavaError> {
    match item.get(name) {
        Some(AttrValue::N(v)) => v
            .parse()
            .map_err(|_| JavaError::new(NUMBER_FORMAT, format!("For input string: \"{v}\""))),
        _ => Err(missing(name)),
    }
}

/// The attributes every REGISTRATION and BINDING row starts with.
fn row_head(pk: &str, sk: &str, row: RowType, tenant_id: &str, execution_id: &str) -> Item {
    let mut item = Item::new();
    s(&mut item, attr::PK, pk);
    s(&mut item, attr::SK, sk);
    s(&mut item, attr::RECORD_TYPE, row.as_str());
    s(&mut item, attr::TENANT_ID, tenant_id);
    s(&mut item, attr::EXECUTION_ID, execution_id);
    item
}

/// The provider's fields and the timestamps both rows end with.
fn row_tail(
    item: &mut Item,
    p: &ProviderFields,
    created_at_epoch_ms: i64,
    expires_at_epoch_s: i64,
) {
    s(item, attr::PROVIDER_EXECUTION_NAME, &p.execution_name);
    s(item, attr::PROVIDER_EXECUTION_ARN, &p.execution_arn);
    s(item, attr::PROVIDER_CALLBACK_ID, &p.callback_id);
    n(item, attr::CREATED_AT_EPOCH_MS, created_at_epoch_ms);
    n(item, attr::EXPIRES_AT_EPOCH_S, expires_at_epoch_s);
}

fn provider_from(item: &Item) -> Result<ProviderFields, JavaError> {
    ProviderFields::new(
        Some(&text(item, attr::PROVIDER_EXECUTION_NAME)?),
        Some(&text(item, attr::PROVIDER_EXECUTION_ARN)?),
        Some(&text(item, attr::PROVIDER_CALLBACK_ID)?),
    )
}

impl CallbackRegistration {
    /// The REGISTRATION row.
    pub fn to_item(&self) -> Item {
        let e = &self.checkpoint.execution;
        let mut item = row_head(
            &self.partition_key(),
            &self.sort_key(),
            RowType::Registration,
            &e.tenant_id,
            &e.execution_id,
        );
        s(&mut item, attr::PIPELINE_ID, &e.pipeline_id);
        s(&mut item, attr::CONTRACT_VERSION, &e.contract_version);
        s(&mut item, attr::RELEASE_VERSION, &e.release_version);
        n(&mut item, attr::GENERATION, self.checkpoint.generation);
        row_tail(
            &mut item,
            &self.provider,
            self.created_at_epoch_ms,
            self.expires_at_epoch_s,
        );
        item
    }

    /// `registrationFromItem`.
    pub fn from_item(item: &Item) -> Result<Self, JavaError> {
        let execution = ExecutionCheckpoint::new(
            Some(&text(item, attr::TENANT_ID)?),
            Some(&text(item, attr::EXECUTION_ID)?),
            Some(&text(item, attr::PIPELINE_ID)?),
            Some(&text(item, attr::CONTRACT_VERSION)?),
            Some(&text(item, attr::RELEASE_VERSION)?),
        )?;
        let checkpoint = DriverCheckpoint::new(execution, long(item, attr::GENERATION)?)?;
        Self::new(
            checkpoint,
            provider_from(item)?,
            long(item, attr::CREATED_AT_EPOCH_MS)?,
            long(item, attr::EXPIRES_AT_EPOCH_S)?,
        )
    }
}

impl CallbackBinding {
    /// The BINDING row.
    pub fn to_item(&self) -> Item {
        let i = &self.await_identity;
        let mut item = row_head(
            &self.partition_key(),
            &self.sort_key(),
            RowType::Binding,
            &i.tenant_id,
            &i.execution_id,
        );
        s(&mut item, attr::INTERACTION_ID, &i.interaction_id);
        s(&mut item, attr::CORRELATION_ID, &i.correlation_id);
        n(&mut item, attr::GENERATION, i.generation);
        s(&mut item, attr::BINDING_STATUS, self.status.as_str());
        row_tail(
            &mut item,
            &self.provider,
            self.created_at_epoch_ms,
            self.expires_at_epoch_s,
        );
        item
    }

    /// `fromItem`.
    pub fn from_item(item: &Item) -> Result<Self, JavaError> {
        let identity = AwaitIdentity::new(
            Some(&text(item, attr::TENANT_ID)?),
            Some(&text(item, attr::EXECUTION_ID)?),
            Some(&text(item, attr::INTERACTION_ID)?),
            Some(&text(item, attr::CORRELATION_ID)?),
            long(item, attr::GENERATION)?,
        )?;
        let provider = provider_from(item)?;
        let status_name = text(item, attr::BINDING_STATUS)?;
        let status = BindingStatus::parse(&status_name).ok_or_else(|| {
            JavaError::illegal_argument(format!(
                "No enum constant org.pipelineframework.aws.durable.model.AwsDurableBindingStatus.{status_name}"
            ))
        })?;
        Self::new(
            identity,
            provider,
            status,
            long(item, attr::CREATED_AT_EPOCH_MS)?,
            long(item, attr::EXPIRES_AT_EPOCH_S)?,
        )
    }

    /// `decodeBinding`: a row that is no binding (a REGISTRATION or DELIVERY row, a malformed
    /// one) is `None`. TPF catches `IllegalArgumentException` (and so `NumberFormatException`)
    /// and `IllegalStateException`; a record's `NullPointerException` cannot arise here, since
    /// every text is read non-null first.
    pub fn decode(item: &Item) -> Option<Self> {
        Self::from_item(item).ok()
    }

    /// The DELIVERY row of this binding's generation (`recordDelivered`); no TTL attribute.
    pub fn delivery_item(
        &self,
        outcome: &str,
        delivered_at_epoch_ms: i64,
        attempt_id: &str,
    ) -> Item {
        let mut item = Item::new();
        s(&mut item, attr::PK, &self.partition_key());
        s(
            &mut item,
            attr::SK,
            &delivered_sort_key(self.await_identity.generation),
        );
        s(&mut item, attr::RECORD_TYPE, RowType::Delivery.as_str());
        s(
            &mut item,
            attr::PROVIDER_CALLBACK_ID,
            &self.provider.callback_id,
        );
        s(&mut item, attr::PROVIDER_OUTCOME, outcome);
        n(
            &mut item,
            attr::DELIVERED_AT_EPOCH_MS,
            delivered_at_epoch_ms,
        );
        s(&mut item, attr::ATTEMPT_ID, attempt_id);
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::binding::DeliveryOutcome;
    use crate::gateway::names::{generation_sort_key, registration_sort_key};

    fn registration() -> CallbackRegistration {
        let ex = ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r"))
            .unwrap();
        CallbackRegistration::new(
            DriverCheckpoint::new(ex, 3).unwrap(),
            ProviderFields::new(Some("tpf-n"), Some("arn:x"), Some("cb")).unwrap(),
            1_700,
            90_000,
        )
        .unwrap()
    }

    fn keys(item: &Item) -> Vec<&str> {
        item.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_registration_row_has_tpfs_attributes_and_reads_back() {
        let r = registration();
        let item = r.to_item();
        assert_eq!(
            keys(&item),
            [
                "contract_version",
                "created_at_epoch_ms",
                "execution_id",
                "expires_at_epoch_s",
                "generation",
                "pipeline_id",
                "pk",
                "provider_callback_id",
                "provider_execution_arn",
                "provider_execution_name",
                "record_type",
                "release_version",
                "sk",
                "tenant_id"
            ]
        );
        assert_eq!(item["sk"], AttrValue::S(registration_sort_key(3).unwrap()));
        assert_eq!(item["record_type"], AttrValue::S("REGISTRATION".into()));
        assert_eq!(item["generation"], AttrValue::N("3".into()));
        assert_eq!(CallbackRegistration::from_item(&item).unwrap(), r);
        // A registration is no binding.
        assert_eq!(CallbackBinding::decode(&item), None);
    }

    #[test]
    fn a_binding_row_reads_back_and_malformed_ones_fail_like_tpf() {
        let id = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 3).unwrap();
        let b = registration().bind(&id).unwrap();
        let item = b.to_item();
        assert_eq!(item["sk"], AttrValue::S(generation_sort_key(3).unwrap()));
        assert_eq!(item["binding_status"], AttrValue::S("OPEN".into()));
        assert_eq!(CallbackBinding::decode(&item), Some(b.clone()));

        let mut no_status = item.clone();
        no_status.remove("binding_status");
        assert_eq!(
            CallbackBinding::from_item(&no_status)
                .unwrap_err()
                .to_string(),
            "IllegalStateException: binding attribute is missing: binding_status"
        );
        let mut wrong_type = item.clone();
        wrong_type.insert("tenant_id".into(), AttrValue::N("1".into()));
        assert_eq!(
            CallbackBinding::from_item(&wrong_type).unwrap_err().message,
            "binding attribute is missing: tenant_id"
        );
        let mut bad_number = item.clone();
        bad_number.insert("generation".into(), AttrValue::N("1.5".into()));
        assert_eq!(
            CallbackBinding::from_item(&bad_number).unwrap_err().class,
            NUMBER_FORMAT
        );
        let mut closed = item.clone();
        closed.insert("binding_status".into(), AttrValue::S("CLOSED".into()));
        assert!(CallbackBinding::from_item(&closed)
            .unwrap_err()
            .message
            .ends_with("AwsDurableBindingStatus.CLOSED"));
        let mut blank = item;
        blank.insert("correlation_id".into(), AttrValue::S(" ".into()));
        assert_eq!(
            CallbackBinding::from_item(&blank).unwrap_err().message,
            "correlation_id must not be blank"
        );

        let delivery = b.delivery_item(DeliveryOutcome::CallbackAccepted.as_str(), 5, "uuid");
        assert_eq!(
            delivery["provider_outcome"],
            AttrValue::S("CALLBACK_ACCEPTED".into())
        );
        assert_eq!(delivery["sk"], AttrValue::S("DELIVERED#3".into()));
        assert!(!delivery.contains_key("expires_at_epoch_s"));
        assert_eq!(CallbackBinding::decode(&delivery), None);
    }
}
