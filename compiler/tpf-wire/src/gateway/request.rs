//! `AwsDurableActionRequest`: the gateway's one request shape, its 15 keys in TPF's order. The
//! caller writes every key, empty optionals as `null` (TPF's own caller does); the gateway reads
//! it with the server mapper ([`ActionRequest::read`]).

use serde::Serialize;
use serde_json::Value;

use super::json::{bind, instantiation, parse, Kind, Mapper};
use super::operation::Operation;
use super::records::{java, AwaitIdentity, DriverCheckpoint};
use super::start::ExecutionInput;
use super::validation::{optional, positive_generation, required};
use crate::java_error::JavaError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ActionRequest {
    pub operation: Operation,
    pub tenant_id: String,
    pub execution_id: Option<String>,
    pub idempotency_key: Option<String>,
    pub pipeline_id: Option<String>,
    pub contract_version: Option<String>,
    pub release_version: Option<String>,
    pub input_json: Option<String>,
    pub await_identity: Option<AwaitIdentity>,
    pub provider_execution_name: Option<String>,
    pub provider_execution_arn: Option<String>,
    pub provider_callback_id: Option<String>,
    pub expected_version: Option<i64>,
    pub reason: Option<String>,
    pub generation: i64,
}

/// The request's components in TPF's order, as the binder reads them.
const PROPS: &[(&str, Kind)] = &[
    ("operation", Kind::Operation),
    ("tenantId", Kind::Text),
    ("executionId", Kind::Text),
    ("idempotencyKey", Kind::Text),
    ("pipelineId", Kind::Text),
    ("contractVersion", Kind::Text),
    ("releaseVersion", Kind::Text),
    ("inputJson", Kind::Text),
    ("awaitIdentity", Kind::Nested),
    ("providerExecutionName", Kind::Text),
    ("providerExecutionArn", Kind::Text),
    ("providerCallbackId", Kind::Text),
    ("expectedVersion", Kind::Long),
    ("reason", Kind::Text),
    ("generation", Kind::Long),
];

/// The optional text components, in TPF's order.
const OPTIONAL_TEXT: [&str; 10] = [
    "executionId",
    "idempotencyKey",
    "pipelineId",
    "contractVersion",
    "releaseVersion",
    "inputJson",
    "providerExecutionName",
    "providerExecutionArn",
    "providerCallbackId",
    "reason",
];

/// The tenant a scheduled `SWEEP` names: TPF's sweep ignores it, its constructor needs one.
pub const SCHEDULED_SWEEP_TENANT: &str = "tpf-sfn-scheduled-sweep";

/// The components of a request before TPF's canonical constructor checks them: what Jackson
/// hands the constructor, and what the factories start from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestParts {
    pub operation: Option<Operation>,
    pub tenant_id: Option<String>,
    pub execution_id: Option<String>,
    pub idempotency_key: Option<String>,
    pub pipeline_id: Option<String>,
    pub contract_version: Option<String>,
    pub release_version: Option<String>,
    pub input_json: Option<String>,
    pub await_identity: Option<AwaitIdentity>,
    pub provider_execution_name: Option<String>,
    pub provider_execution_arn: Option<String>,
    pub provider_callback_id: Option<String>,
    pub expected_version: Option<i64>,
    pub reason: Option<String>,
    pub generation: i64,
}

impl RequestParts {
    fn optional_text(&self, name: &str) -> Option<&str> {
        match name {
            "executionId" => self.execution_id.as_deref(),
            "idempotencyKey" => self.idempotency_key.as_deref(),
            "pipelineId" => self.pipeline_id.as_deref(),
            "contractVersion" => self.contract_version.as_deref(),
            "releaseVersion" => self.release_version.as_deref(),
            "inputJson" => self.input_json.as_deref(),
            "providerExecutionName" => self.provider_execution_name.as_deref(),
            "providerExecutionArn" => self.provider_execution_arn.as_deref(),
            "providerCallbackId" => self.provider_callback_id.as_deref(),
            "reason" => self.reason.as_deref(),
            _ => None,
        }
    }

    /// TPF's canonical constructor: `operation` non-null, `tenantId` required, each present
    /// optional non-blank, `generation ≥ 1`, in component order.
    pub fn build(self) -> Result<ActionRequest, JavaError> {
        let operation = self
            .operation
            .ok_or_else(|| JavaError::null_pointer("operation"))?;
        let tenant_id = required(self.tenant_id.as_deref(), "tenantId")?.to_owned();
        for name in OPTIONAL_TEXT {
            optional(self.optional_text(name), name)?;
        }
        positive_generation(self.generation)?;
        Ok(ActionRequest {
            operation,
            tenant_id,
            execution_id: self.execution_id,
            idempotency_key: self.idempotency_key,
            pipeline_id: self.pipeline_id,
            contract_version: self.contract_version,
            release_version: self.release_version,
            input_json: self.input_json,
            await_identity: self.await_identity,
            provider_execution_name: self.provider_execution_name,
            provider_execution_arn: self.provider_execution_arn,
            provider_callback_id: self.provider_callback_id,
            expected_version: self.expected_version,
            reason: self.reason,
            generation: self.generation,
        })
    }

    /// `forExecution(operation, checkpoint)`: the execution's identity and the generation.
    fn for_execution(operation: Operation, checkpoint: &DriverCheckpoint) -> Self {
        let e = &checkpoint.execution;
        Self {
            operation: Some(operation),
            tenant_id: Some(e.tenant_id.clone()),
            execution_id: Some(e.execution_id.clone()),
            pipeline_id: Some(e.pipeline_id.clone()),
            contract_version: Some(e.contract_version.clone()),
            release_version: Some(e.release_version.clone()),
            generation: checkpoint.generation,
            ..Self::default()
        }
    }
}

impl ActionRequest {
    /// The request as the gateway's Quarkus mapper reads `text` (see [`Mapper::Server`]). A
    /// constructor failure is Jackson's `ValueInstantiationException` wrapping TPF's exception.
    /// A `null` document binds no request at all, and the gateway's
    /// `requireNonNull(request, "request")` refuses it.
    pub fn read(text: &str) -> Result<Self, JavaError> {
        match parse(text)? {
            Value::Null => Err(JavaError::null_pointer("request")),
            value => Self::read_value(&value, Mapper::Server),
        }
    }

    /// The request bound from a parsed document by either mapper.
    pub fn read_value(value: &Value, mapper: Mapper) -> Result<Self, JavaError> {
        let mut await_identity = None;
        let bound = bind(value, java::ACTION_REQUEST, PROPS, mapper, &mut |_, raw| {
            await_identity = Some(AwaitIdentity::read(raw, mapper)?);
            Ok(())
        })?;
        if bound.raw("awaitIdentity").is_none() {
            await_identity = None;
        }
        RequestParts {
            operation: bound.operation("operation"),
            tenant_id: bound.text("tenantId"),
            execution_id: bound.text("executionId"),
            idempotency_key: bound.text("idempotencyKey"),
            pipeline_id: bound.text("pipelineId"),
            contract_version: bound.text("contractVersion"),
            release_version: bound.text("releaseVersion"),
            input_json: bound.text("inputJson"),
            await_identity,
            provider_execution_name: bound.text("providerExecutionName"),
            provider_execution_arn: bound.text("providerExecutionArn"),
            provider_callback_id: bound.text("providerCallbackId"),
            expected_version: bound.long("expectedVersion"),
            reason: bound.text("reason"),
            // A primitive `long`: absent or null binds 0, which the constructor refuses.
            generation: bound.long("generation").unwrap_or(0),
        }
        .build()
        .map_err(|e| instantiation(java::ACTION_REQUEST, e))
    }

    /// The exact bytes TPF's caller sends: all 15 keys, empty optionals as `null`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// `submit(input)`.
    pub fn submit(input: &ExecutionInput) -> Result<Self, JavaError> {
        RequestParts {
            operation: Some(Operation::Submit),
            tenant_id: Some(input.tenant_id.clone()),
            idempotency_key: Some(input.idempotency_key.clone()),
            pipeline_id: Some(input.pipeline_id.clone()),
            contract_version: Some(input.contract_version.clone()),
            release_version: Some(input.release_version.clone()),
            input_json: Some(input.input_json.clone()),
            generation: input.generation,
            ..RequestParts::default()
        }
        .build()
    }

    /// `status`, `result`, `sweep`, `pendingAwait`, `executionAwaits`: the execution's
    /// identity and generation, nothing else.
    pub fn for_execution(
        operation: Operation,
        checkpoint: &DriverCheckpoint,
    ) -> Result<Self, JavaError> {
        RequestParts::for_execution(operation, checkpoint).build()
    }

    /// The scheduled sweep's request (not one of TPF's factories: TPF's driver sweeps per
    /// execution). TPF's `SWEEP` reads no key but `operation` (`sweepOnce(now)`, the tenant
    /// ignored), yet its record's constructor requires a tenant and a positive generation:
    /// [`SCHEDULED_SWEEP_TENANT`] and generation 1.
    pub fn scheduled_sweep() -> Self {
        Self {
            operation: Operation::Sweep,
            tenant_id: SCHEDULED_SWEEP_TENANT.to_owned(),
            execution_id: None,
            idempotency_key: None,
            pipeline_id: None,
            contract_version: None,
            release_version: None,
            input_json: None,
            await_identity: None,
            provider_execution_name: None,
            provider_execution_arn: None,
            provider_callback_id: None,
            expected_version: None,
            reason: None,
            generation: 1,
        }
    }

    /// `redrive(checkpoint, expectedVersion, reason)`.
    pub fn redrive(
        checkpoint: &DriverCheckpoint,
        expected_version: i64,
        reason: Option<&str>,
    ) -> Result<Self, JavaError> {
        if expected_version < 0 {
            return Err(JavaError::illegal_argument(
                "expectedVersion must be non-negative",
            ));
        }
        let mut parts = RequestParts::for_execution(Operation::Redrive, checkpoint);
        parts.build_check()?;
        parts.expected_version = Some(expected_version);
        parts.reason = Some(required(reason, "reason")?.to_owned());
        parts.build()
    }

    /// `awaitCheckpoint(identity)`.
    pub fn await_checkpoint(identity: &AwaitIdentity) -> Result<Self, JavaError> {
        RequestParts {
            operation: Some(Operation::ReadAwaitCheckpoint),
            tenant_id: Some(identity.tenant_id.clone()),
            execution_id: Some(identity.execution_id.clone()),
            await_identity: Some(identity.clone()),
            generation: identity.generation,
            ..RequestParts::default()
        }
        .build()
    }

    /// `register(checkpoint, name, arn, callbackId)`.
    pub fn register(
        checkpoint: &DriverCheckpoint,
        provider: ProviderCallback<'_>,
    ) -> Result<Self, JavaError> {
        let mut parts = RequestParts::for_execution(Operation::RegisterCallback, checkpoint);
        parts.build_check()?;
        provider.fill(&mut parts)?;
        parts.build()
    }

    /// `bind(identity, name, arn, callbackId)`.
    pub fn bind(
        identity: &AwaitIdentity,
        provider: ProviderCallback<'_>,
    ) -> Result<Self, JavaError> {
        let mut parts = RequestParts {
            operation: Some(Operation::BindCallback),
            tenant_id: Some(identity.tenant_id.clone()),
            execution_id: Some(identity.execution_id.clone()),
            await_identity: Some(identity.clone()),
            generation: identity.generation,
            ..RequestParts::default()
        };
        provider.fill(&mut parts)?;
        parts.build()
    }
}

impl RequestParts {
    /// The factories build their base request first (TPF constructs it before reading the
    /// extra arguments), so the base's failures come first.
    fn build_check(&self) -> Result<(), JavaError> {
        self.clone().build().map(|_| ())
    }
}

/// The provider's callback fields a driver registers and binds.
#[derive(Debug, Clone, Copy)]
pub struct ProviderCallback<'a> {
    pub execution_name: Option<&'a str>,
    pub execution_arn: Option<&'a str>,
    pub callback_id: Option<&'a str>,
}

impl ProviderCallback<'_> {
    fn fill(&self, parts: &mut RequestParts) -> Result<(), JavaError> {
        parts.provider_execution_name =
            Some(required(self.execution_name, "providerExecutionName")?.to_owned());
        parts.provider_execution_arn =
            Some(required(self.execution_arn, "providerExecutionArn")?.to_owned());
        parts.provider_callback_id =
            Some(required(self.callback_id, "providerCallbackId")?.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::records::ExecutionCheckpoint;

    #[test]
    fn the_scheduled_sweep_is_a_request_tpfs_gateway_reads() {
        let sweep = ActionRequest::scheduled_sweep();
        let read = ActionRequest::read(&sweep.to_json()).expect("TPF's gateway reads it");
        assert_eq!(read, sweep);
        assert_eq!(read.operation, Operation::Sweep);
        // Without the tenant or with generation 0, TPF's constructor refuses it.
        let mut v: serde_json::Value = serde_json::from_str(&sweep.to_json()).unwrap();
        v["generation"] = serde_json::json!(0);
        assert!(ActionRequest::read(&v.to_string()).is_err());
        v["generation"] = serde_json::json!(1);
        v["tenantId"] = serde_json::Value::Null;
        assert!(ActionRequest::read(&v.to_string()).is_err());
    }

    use crate::java_error::class;

    fn checkpoint() -> DriverCheckpoint {
        DriverCheckpoint::new(
            ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r"))
                .unwrap(),
            1,
        )
        .unwrap()
    }

    #[test]
    fn every_key_is_written_in_tpf_order_with_nulls() {
        let r = ActionRequest::for_execution(Operation::Status, &checkpoint()).unwrap();
        assert_eq!(
            r.to_json(),
            r#"{"operation":"STATUS","tenantId":"t","executionId":"e","idempotencyKey":null,"pipelineId":"p","contractVersion":"c","releaseVersion":"r","inputJson":null,"awaitIdentity":null,"providerExecutionName":null,"providerExecutionArn":null,"providerCallbackId":null,"expectedVersion":null,"reason":null,"generation":1}"#
        );
        assert_eq!(ActionRequest::read(&r.to_json()).unwrap(), r);
    }

    #[test]
    fn redrive_refuses_a_negative_version_and_a_blank_reason() {
        let e = ActionRequest::redrive(&checkpoint(), -1, Some("x")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "IllegalArgumentException: expectedVersion must be non-negative"
        );
        let e = ActionRequest::redrive(&checkpoint(), 0, Some(" ")).unwrap_err();
        assert_eq!(e.message, "reason must not be blank");
        let r = ActionRequest::redrive(&checkpoint(), 7, Some("why")).unwrap();
        assert_eq!(
            (r.expected_version, r.reason.as_deref()),
            (Some(7), Some("why"))
        );
    }

    #[test]
    fn server_reading_ignores_unknown_keys_and_case_but_not_enum_case() {
        let r = ActionRequest::read(
            r#"{"OPERATION":"SWEEP","tenantid":"t","generation":2,"nextDueAt":1}"#,
        )
        .unwrap();
        assert_eq!((r.operation, r.generation), (Operation::Sweep, 2));
        let e = ActionRequest::read(r#"{"operation":"sweep","tenantId":"t","generation":2}"#)
            .unwrap_err();
        assert_eq!(e.class, class::INVALID_FORMAT);
        let e = ActionRequest::read("[]").unwrap_err();
        assert_eq!(e.class, class::MISMATCHED_INPUT);
        let e = ActionRequest::read("{").unwrap_err();
        assert_eq!(e.class, class::JSON_PARSE);
        let e = ActionRequest::read(" null ").unwrap_err();
        assert_eq!(e.to_string(), "NullPointerException: request");
    }

    #[test]
    fn a_bad_nested_identity_fails_before_the_request_rules() {
        let e = ActionRequest::read(
            r#"{"operation":"BIND_CALLBACK","awaitIdentity":{"tenantId":"t"},"generation":0}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("AwsDurableAwaitIdentity"), "{e}");
        assert_eq!(
            e.root_cause().to_string(),
            "NullPointerException: executionId"
        );
    }
}
