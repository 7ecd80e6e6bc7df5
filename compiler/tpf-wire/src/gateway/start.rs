//! Starting a durable coordinator execution as TPF's host starts one
//! (`AwsDurableExecutionStarter`): an asynchronous, named invoke of the coordinator function's
//! qualifier with the `AwsDurableExecutionInput` payload.

use serde::{Deserialize, Serialize};

use serde_json::Value;

use super::json::{bind, instantiation, parse, Kind, Mapper};
use super::names::durable_execution_name;
use super::records::AwaitIdentity;
use super::validation::{optional, positive_generation, required};
use crate::java_error::{class, JavaError};

/// The invocation type of every start (Lambda's `Event`).
pub const INVOCATION_TYPE: &str = "EVENT";
/// The status TPF's starter answers for a start, and for a name that already started.
pub const STARTED_STATUS: u16 = 202;
/// The input a replacement generation carries instead of the client's payload.
pub const RESUME_INPUT_JSON: &str = "{}";

/// `AwsDurableExecutionInput`: what a coordinator execution starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecutionInput {
    pub tenant_id: String,
    pub idempotency_key: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub input_json: String,
    pub resume_execution_id: Option<String>,
    pub generation: i64,
}

/// The release a coordinator execution runs under.
#[derive(Debug, Clone, Copy)]
pub struct ReleaseIdentity<'a> {
    pub pipeline_id: Option<&'a str>,
    pub contract_version: Option<&'a str>,
    pub release_version: Option<&'a str>,
}

impl ExecutionInput {
    /// The canonical constructor's rules, in TPF's order.
    pub fn new(
        tenant_id: Option<&str>,
        idempotency_key: Option<&str>,
        release: ReleaseIdentity<'_>,
        input_json: Option<&str>,
        resume_execution_id: Option<&str>,
        generation: i64,
    ) -> Result<Self, JavaError> {
        let input = Self {
            tenant_id: required(tenant_id, "tenantId")?.to_owned(),
            idempotency_key: required(idempotency_key, "idempotencyKey")?.to_owned(),
            pipeline_id: required(release.pipeline_id, "pipelineId")?.to_owned(),
            contract_version: required(release.contract_version, "contractVersion")?.to_owned(),
            release_version: required(release.release_version, "releaseVersion")?.to_owned(),
            input_json: required(input_json, "inputJson")?.to_owned(),
            resume_execution_id: resume_execution_id.map(str::to_owned),
            generation,
        };
        optional(resume_execution_id, "resumeExecutionId")?;
        positive_generation(generation)?;
        Ok(input)
    }

    /// `resume(identity, …)`: the replacement generation of an await's execution. The
    /// execution id is the idempotency key and the resume id, the input is `{}`, the
    /// generation is the identity's plus one (`Math.addExact`).
    pub fn resume(
        identity: &AwaitIdentity,
        release: ReleaseIdentity<'_>,
    ) -> Result<Self, JavaError> {
        Self::resume_execution(
            &identity.tenant_id,
            &identity.execution_id,
            identity.generation,
            release,
        )
    }

    /// The same replacement for an execution that is not parked on an await (TPF's host only
    /// replaces awaiting executions; the project's reconciler also replaces a driver that
    /// ended while its execution was queued, running or waiting to retry).
    pub fn resume_execution(
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
        release: ReleaseIdentity<'_>,
    ) -> Result<Self, JavaError> {
        let next = generation
            .checked_add(1)
            .ok_or_else(|| JavaError::new(class::ARITHMETIC, "long overflow"))?;
        Self::new(
            Some(tenant_id),
            Some(execution_id),
            release,
            Some(RESUME_INPUT_JSON),
            Some(execution_id),
            next,
        )
    }

    /// The durable execution name this input starts under.
    pub fn durable_execution_name(&self) -> String {
        durable_execution_name(
            Some(&self.tenant_id),
            Some(&self.idempotency_key),
            self.generation,
        )
        .unwrap_or_default()
    }

    /// The payload as the coordinator function's SerDes reads it ([`Mapper::Durable`]).
    pub fn read(text: &str) -> Result<Self, JavaError> {
        Self::read_value(&parse(text)?, Mapper::Durable)
    }

    pub fn read_value(value: &Value, mapper: Mapper) -> Result<Self, JavaError> {
        const CLASS: &str = "org.pipelineframework.aws.durable.model.AwsDurableExecutionInput";
        const PROPS: &[(&str, Kind)] = &[
            ("tenantId", Kind::Text),
            ("idempotencyKey", Kind::Text),
            ("pipelineId", Kind::Text),
            ("contractVersion", Kind::Text),
            ("releaseVersion", Kind::Text),
            ("inputJson", Kind::Text),
            ("resumeExecutionId", Kind::Text),
            ("generation", Kind::Long),
        ];
        let b = bind(value, CLASS, PROPS, mapper, &mut |_, _| Ok(()))?;
        Self::new(
            b.text("tenantId").as_deref(),
            b.text("idempotencyKey").as_deref(),
            ReleaseIdentity {
                pipeline_id: b.text("pipelineId").as_deref(),
                contract_version: b.text("contractVersion").as_deref(),
                release_version: b.text("releaseVersion").as_deref(),
            },
            b.text("inputJson").as_deref(),
            b.text("resumeExecutionId").as_deref(),
            b.long("generation").unwrap_or(0),
        )
        .map_err(|e| instantiation(CLASS, e))
    }

    /// The payload bytes TPF's starter sends.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `AwsDurableStartResponse`: what TPF's starter answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartResponse {
    pub durable_execution_name: String,
    pub status_code: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    const RELEASE: ReleaseIdentity<'static> = ReleaseIdentity {
        pipeline_id: Some("p"),
        contract_version: Some("c"),
        release_version: Some("r"),
    };

    #[test]
    fn resume_names_the_next_generation_from_the_execution_id() {
        let id = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 1).unwrap();
        let r = ExecutionInput::resume(&id, RELEASE).unwrap();
        assert_eq!(
            r.to_json(),
            r#"{"tenantId":"t","idempotencyKey":"e","pipelineId":"p","contractVersion":"c","releaseVersion":"r","inputJson":"{}","resumeExecutionId":"e","generation":2}"#
        );
        assert_eq!(
            r.durable_execution_name(),
            durable_execution_name(Some("t"), Some("e"), 2).unwrap()
        );
        // The coordinator's SerDes reads it back; exact keys, unknown ones ignored.
        assert_eq!(ExecutionInput::read(&r.to_json()).unwrap(), r);
        let e = ExecutionInput::read(r#"{"TenantId":"t","extra":1}"#).unwrap_err();
        assert_eq!(e.root_cause().to_string(), "NullPointerException: tenantId");
        let max = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), i64::MAX).unwrap();
        assert_eq!(
            ExecutionInput::resume(&max, RELEASE).unwrap_err().class,
            class::ARITHMETIC
        );
    }

    #[test]
    fn the_constructor_checks_in_tpf_order() {
        let e = ExecutionInput::new(Some("t"), Some("k"), RELEASE, None, Some(" "), 0).unwrap_err();
        assert_eq!(e.to_string(), "NullPointerException: inputJson");
        let e = ExecutionInput::new(Some("t"), Some("k"), RELEASE, Some("{}"), Some(" "), 0)
            .unwrap_err();
        assert_eq!(e.message, "resumeExecutionId must not be blank");
    }
}
