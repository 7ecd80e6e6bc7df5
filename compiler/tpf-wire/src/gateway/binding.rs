//! TPF's callback-binding table: one table, three kinds of row, written only by conditional
//! puts (`attribute_not_exists(pk) AND attribute_not_exists(sk)`), never updated or deleted.
//!
//! | row | `pk` | `sk` |
//! | --- | --- | --- |
//! | REGISTRATION | `<tenant>#<execution>` | `REGISTRATION#` + 20-digit generation |
//! | BINDING | `<tenant>#<interaction>` | `GEN#` + 20-digit generation |
//! | DELIVERY | BINDING's `pk` | `DELIVERED#<generation>` |
//!
//! A put that finds its key taken re-reads the row: the same authority (below) is an identical
//! row and answers `false`; anything else is TPF's conflict ([`conflict`]).

use std::fmt;

use super::names::{
    binding_partition_key, generation_sort_key, registration_partition_key, registration_sort_key,
};
use super::records::{AwaitIdentity, DriverCheckpoint};
use super::validation::required;
use crate::java_error::JavaError;

/// Attribute names.
pub mod attr {
    pub const PK: &str = "pk";
    pub const SK: &str = "sk";
    pub const RECORD_TYPE: &str = "record_type";
    pub const TENANT_ID: &str = "tenant_id";
    pub const EXECUTION_ID: &str = "execution_id";
    pub const INTERACTION_ID: &str = "interaction_id";
    pub const CORRELATION_ID: &str = "correlation_id";
    pub const PIPELINE_ID: &str = "pipeline_id";
    pub const CONTRACT_VERSION: &str = "contract_version";
    pub const RELEASE_VERSION: &str = "release_version";
    /// A number.
    pub const GENERATION: &str = "generation";
    pub const PROVIDER_EXECUTION_NAME: &str = "provider_execution_name";
    pub const PROVIDER_EXECUTION_ARN: &str = "provider_execution_arn";
    pub const PROVIDER_CALLBACK_ID: &str = "provider_callback_id";
    pub const BINDING_STATUS: &str = "binding_status";
    /// A number.
    pub const CREATED_AT_EPOCH_MS: &str = "created_at_epoch_ms";
    /// A number; the table's TTL attribute (DELIVERY rows have none).
    pub const EXPIRES_AT_EPOCH_S: &str = "expires_at_epoch_s";
    pub const PROVIDER_OUTCOME: &str = "provider_outcome";
    /// A number.
    pub const DELIVERED_AT_EPOCH_MS: &str = "delivered_at_epoch_ms";
    /// A random UUID per delivery attempt.
    pub const ATTEMPT_ID: &str = "attempt_id";
}

/// The global secondary index on `provider_execution_arn` (projection ALL).
pub const PROVIDER_EXECUTION_INDEX: &str = "provider-execution-index";

/// The table's default name. TPF's template lets CloudFormation name it and hands the name to
/// its functions in `TPF_AWS_DURABLE_BINDING_TABLE` ([`TABLE_ENV`]); `tables create` and the
/// exports name it this, after TPF's other tables (`tpf_execution`, …).
pub const TABLE: &str = "tpf_callback_binding";

/// The variable TPF's functions read the table's name from.
pub const TABLE_ENV: &str = "TPF_AWS_DURABLE_BINDING_TABLE";

/// How long a registration and a binding live by default
/// (`TPF_AWS_DURABLE_CALLBACK_RETENTION_SECONDS`): 90 days.
pub const DEFAULT_RETENTION_SECONDS: i64 = 7_776_000;

/// `record_type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowType {
    Registration,
    Binding,
    Delivery,
}

impl RowType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registration => "REGISTRATION",
            Self::Binding => "BINDING",
            Self::Delivery => "DELIVERY",
        }
    }
}

/// `AwsDurableBindingStatus`; TPF only ever writes `OPEN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingStatus {
    Open,
    Delivered,
    Obsolete,
}

impl BindingStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "OPEN",
            Self::Delivered => "DELIVERED",
            Self::Obsolete => "OBSOLETE",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Self::Open, Self::Delivered, Self::Obsolete]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

impl fmt::Display for BindingStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A DELIVERY row's `provider_outcome`: how the wake-up knows a generation's callback was
/// answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryOutcome {
    /// The provider accepted the callback success.
    CallbackAccepted,
    /// The provider refused the send, and its history shows the callback already succeeded
    /// (an earlier send was accepted and its answer lost).
    ProviderStateSucceeded,
}

impl DeliveryOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CallbackAccepted => "CALLBACK_ACCEPTED",
            Self::ProviderStateSucceeded => "PROVIDER_STATE_SUCCEEDED",
        }
    }
}

impl fmt::Display for DeliveryOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The provider's side of a callback: the durable execution and its callback id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ProviderFields {
    pub execution_name: String,
    pub execution_arn: String,
    pub callback_id: String,
}

impl ProviderFields {
    pub fn new(
        execution_name: Option<&str>,
        execution_arn: Option<&str>,
        callback_id: Option<&str>,
    ) -> Result<Self, JavaError> {
        Ok(Self {
            execution_name: required(execution_name, "providerExecutionName")?.to_owned(),
            execution_arn: required(execution_arn, "providerExecutionArn")?.to_owned(),
            callback_id: required(callback_id, "providerCallbackId")?.to_owned(),
        })
    }
}

/// `AwsDurableCallbackRegistration`: a driver generation's callback, registered before any
/// await identity exists.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CallbackRegistration {
    pub checkpoint: DriverCheckpoint,
    pub provider: ProviderFields,
    pub created_at_epoch_ms: i64,
    pub expires_at_epoch_s: i64,
}

impl CallbackRegistration {
    pub fn new(
        checkpoint: DriverCheckpoint,
        provider: ProviderFields,
        created_at_epoch_ms: i64,
        expires_at_epoch_s: i64,
    ) -> Result<Self, JavaError> {
        if created_at_epoch_ms < 0 {
            return Err(JavaError::illegal_argument(
                "createdAtEpochMs must be non-negative",
            ));
        }
        if expires_at_epoch_s <= 0 {
            return Err(JavaError::illegal_argument(
                "expiresAtEpochS must be positive",
            ));
        }
        Ok(Self {
            checkpoint,
            provider,
            created_at_epoch_ms,
            expires_at_epoch_s,
        })
    }

    /// REGISTER_CALLBACK's timestamps: created now, expiring `retention_seconds` after now's
    /// second (`Instant.plus(seconds).getEpochSecond()`).
    pub fn expiry_after(now_epoch_ms: i64, retention_seconds: i64) -> i64 {
        now_epoch_ms.div_euclid(1000) + retention_seconds
    }

    pub fn partition_key(&self) -> String {
        let e = &self.checkpoint.execution;
        registration_partition_key(&e.tenant_id, &e.execution_id)
    }

    pub fn sort_key(&self) -> String {
        // The checkpoint's generation is positive by construction.
        registration_sort_key(self.checkpoint.generation).unwrap_or_default()
    }

    /// `bind(identity)`: the identity must be this registration's execution and generation.
    pub fn bind(&self, identity: &AwaitIdentity) -> Result<CallbackBinding, JavaError> {
        let e = &self.checkpoint.execution;
        if e.tenant_id != identity.tenant_id
            || e.execution_id != identity.execution_id
            || self.checkpoint.generation != identity.generation
        {
            return Err(JavaError::illegal_argument(
                "Await identity does not belong to callback registration",
            ));
        }
        CallbackBinding::new(
            identity.clone(),
            self.provider.clone(),
            BindingStatus::Open,
            self.created_at_epoch_ms,
            self.expires_at_epoch_s,
        )
    }

    /// `sameRegistrationAuthority`: tenant, execution, generation and the provider fields
    /// (the release and the timestamps do not count).
    pub fn same_authority(&self, other: &Self) -> bool {
        let (a, b) = (&self.checkpoint.execution, &other.checkpoint.execution);
        a.tenant_id == b.tenant_id
            && a.execution_id == b.execution_id
            && self.checkpoint.generation == other.checkpoint.generation
            && self.provider == other.provider
    }
}

/// `AwsDurableCallbackBinding`: an await identity bound to its generation's callback.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CallbackBinding {
    pub await_identity: AwaitIdentity,
    pub provider: ProviderFields,
    pub status: BindingStatus,
    pub created_at_epoch_ms: i64,
    pub expires_at_epoch_s: i64,
}

impl CallbackBinding {
    pub fn new(
        await_identity: AwaitIdentity,
        provider: ProviderFields,
        status: BindingStatus,
        created_at_epoch_ms: i64,
        expires_at_epoch_s: i64,
    ) -> Result<Self, JavaError> {
        if created_at_epoch_ms < 0 || expires_at_epoch_s < 0 {
            return Err(JavaError::illegal_argument(
                "binding timestamps must be non-negative",
            ));
        }
        Ok(Self {
            await_identity,
            provider,
            status,
            created_at_epoch_ms,
            expires_at_epoch_s,
        })
    }

    pub fn partition_key(&self) -> String {
        let i = &self.await_identity;
        binding_partition_key(&i.tenant_id, &i.interaction_id)
    }

    pub fn sort_key(&self) -> String {
        generation_sort_key(self.await_identity.generation).unwrap_or_default()
    }

    /// `sameBindingAuthority`: the identity, the provider fields and the status (the
    /// timestamps do not count).
    pub fn same_authority(&self, other: &Self) -> bool {
        self.await_identity == other.await_identity
            && self.provider == other.provider
            && self.status == other.status
    }
}

/// TPF's conflict when a row's key is held by another authority.
pub fn conflict(row: RowType) -> JavaError {
    let what = match row {
        RowType::Registration => "registration",
        _ => "binding",
    };
    JavaError::illegal_state(format!(
        "callback {what} generation is already owned by another callback"
    ))
}

/// BIND_CALLBACK without a registration for the identity's generation.
pub fn registration_missing() -> JavaError {
    JavaError::illegal_state("callback registration is not available")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::records::ExecutionCheckpoint;

    fn registration(callback: &str, created: i64) -> CallbackRegistration {
        let ex = ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r"))
            .unwrap();
        CallbackRegistration::new(
            DriverCheckpoint::new(ex, 1).unwrap(),
            ProviderFields::new(Some("tpf-x"), Some("arn"), Some(callback)).unwrap(),
            created,
            CallbackRegistration::expiry_after(created, DEFAULT_RETENTION_SECONDS),
        )
        .unwrap()
    }

    #[test]
    fn keys_and_authority() {
        let r = registration("cb", 1_500);
        assert_eq!(r.partition_key(), "t#e");
        assert_eq!(r.sort_key(), "REGISTRATION#00000000000000000001");
        assert_eq!(r.expires_at_epoch_s, 1 + DEFAULT_RETENTION_SECONDS);
        assert!(r.same_authority(&registration("cb", 99_000)));
        assert!(!r.same_authority(&registration("other", 1_500)));
        let id = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 1).unwrap();
        let b = r.bind(&id).unwrap();
        assert_eq!(
            (b.partition_key(), b.sort_key()),
            ("t#i".to_owned(), "GEN#00000000000000000001".to_owned())
        );
        assert_eq!(b.status, BindingStatus::Open);
        let other = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 2).unwrap();
        assert_eq!(
            r.bind(&other).unwrap_err().message,
            "Await identity does not belong to callback registration"
        );
    }

    #[test]
    fn conflicts_name_the_row() {
        assert_eq!(
            conflict(RowType::Registration).to_string(),
            "IllegalStateException: callback registration generation is already owned by another callback"
        );
        assert_eq!(
            conflict(RowType::Binding).message,
            "callback binding generation is already owned by another callback"
        );
    }
}
