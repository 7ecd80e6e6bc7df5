//! The records the gateway's request and response nest, field for field in TPF's component
//! order (the order Jackson writes them). Every constructor applies the record's own rules in
//! TPF's order, so a value of these types is one TPF's code could have built.

use serde::Serialize;
use serde_json::Value;

use super::json::{bind, instantiation, Bound, Kind, Mapper};
use super::validation::{positive_generation, required};
use crate::java_error::JavaError;

/// Java class names, as Jackson's messages name them.
pub mod java {
    macro_rules! classes {
        ($($name:ident => $simple:literal),+ $(,)?) => {
            $( pub const $name: &str = concat!("org.pipelineframework.aws.durable.model.", $simple); )+
        };
    }
    classes!(
        ACTION_REQUEST => "AwsDurableActionRequest",
        ACTION_RESPONSE => "AwsDurableActionResponse",
        AWAIT_IDENTITY => "AwsDurableAwaitIdentity",
        EXECUTION_CHECKPOINT => "AwsDurableExecutionCheckpoint",
        AWAIT_CHECKPOINT => "AwsDurableAwaitCheckpoint",
        CALLBACK_SIGNAL => "AwsDurableCallbackSignal",
    );
}

/// Binds a record whose properties are all text or `long`, then runs its constructor; a
/// constructor failure is Jackson's `ValueInstantiationException` around it.
fn read_flat<T>(
    value: &Value,
    mapper: Mapper,
    class: &'static str,
    props: &'static [(&'static str, Kind)],
    build: impl FnOnce(&Bound<'_>) -> Result<T, JavaError>,
) -> Result<T, JavaError> {
    let bound = bind(value, class, props, mapper, &mut |_, _| Ok(()))?;
    build(&bound).map_err(|e| instantiation(class, e))
}

/// `AwsDurableAwaitIdentity`: one TPF await interaction of one driver generation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AwaitIdentity {
    pub tenant_id: String,
    pub execution_id: String,
    pub interaction_id: String,
    pub correlation_id: String,
    pub generation: i64,
}

impl AwaitIdentity {
    pub fn new(
        tenant_id: Option<&str>,
        execution_id: Option<&str>,
        interaction_id: Option<&str>,
        correlation_id: Option<&str>,
        generation: i64,
    ) -> Result<Self, JavaError> {
        let tenant_id = required(tenant_id, "tenantId")?.to_owned();
        let execution_id = required(execution_id, "executionId")?.to_owned();
        let interaction_id = required(interaction_id, "interactionId")?.to_owned();
        let correlation_id = required(correlation_id, "correlationId")?.to_owned();
        positive_generation(generation)?;
        Ok(Self {
            tenant_id,
            execution_id,
            interaction_id,
            correlation_id,
            generation,
        })
    }

    pub fn read(value: &Value, mapper: Mapper) -> Result<Self, JavaError> {
        const PROPS: &[(&str, Kind)] = &[
            ("tenantId", Kind::Text),
            ("executionId", Kind::Text),
            ("interactionId", Kind::Text),
            ("correlationId", Kind::Text),
            ("generation", Kind::Long),
        ];
        read_flat(value, mapper, java::AWAIT_IDENTITY, PROPS, |b| {
            Self::new(
                b.text("tenantId").as_deref(),
                b.text("executionId").as_deref(),
                b.text("interactionId").as_deref(),
                b.text("correlationId").as_deref(),
                b.long("generation").unwrap_or(0),
            )
        })
    }
}

/// `AwsDurableExecutionCheckpoint`: a TPF execution's identity, with no generation by design.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecutionCheckpoint {
    pub tenant_id: String,
    pub execution_id: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}

impl ExecutionCheckpoint {
    pub fn new(
        tenant_id: Option<&str>,
        execution_id: Option<&str>,
        pipeline_id: Option<&str>,
        contract_version: Option<&str>,
        release_version: Option<&str>,
    ) -> Result<Self, JavaError> {
        Ok(Self {
            tenant_id: required(tenant_id, "tenantId")?.to_owned(),
            execution_id: required(execution_id, "executionId")?.to_owned(),
            pipeline_id: required(pipeline_id, "pipelineId")?.to_owned(),
            contract_version: required(contract_version, "contractVersion")?.to_owned(),
            release_version: required(release_version, "releaseVersion")?.to_owned(),
        })
    }

    pub fn read(value: &Value, mapper: Mapper) -> Result<Self, JavaError> {
        const PROPS: &[(&str, Kind)] = &[
            ("tenantId", Kind::Text),
            ("executionId", Kind::Text),
            ("pipelineId", Kind::Text),
            ("contractVersion", Kind::Text),
            ("releaseVersion", Kind::Text),
        ];
        read_flat(value, mapper, java::EXECUTION_CHECKPOINT, PROPS, |b| {
            Self::new(
                b.text("tenantId").as_deref(),
                b.text("executionId").as_deref(),
                b.text("pipelineId").as_deref(),
                b.text("contractVersion").as_deref(),
                b.text("releaseVersion").as_deref(),
            )
        })
    }
}

/// `AwsDurableDriverCheckpoint`: the execution checkpoint plus the driver's generation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct DriverCheckpoint {
    pub execution: ExecutionCheckpoint,
    pub generation: i64,
}

impl DriverCheckpoint {
    pub fn new(execution: ExecutionCheckpoint, generation: i64) -> Result<Self, JavaError> {
        positive_generation(generation)?;
        Ok(Self {
            execution,
            generation,
        })
    }
}

/// `AwsDurableAwaitCheckpoint`: TPF's await projection; `status` is an `AwaitInteractionStatus`
/// name, kept as text as TPF's record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AwaitCheckpoint {
    pub tenant_id: String,
    pub execution_id: String,
    pub interaction_id: String,
    pub correlation_id: String,
    pub unit_id: String,
    pub step_id: String,
    pub status: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}

/// `AwaitCheckpoint`'s components in TPF's order.
const AWAIT_CHECKPOINT_PROPS: &[(&str, Kind)] = &[
    ("tenantId", Kind::Text),
    ("executionId", Kind::Text),
    ("interactionId", Kind::Text),
    ("correlationId", Kind::Text),
    ("unitId", Kind::Text),
    ("stepId", Kind::Text),
    ("status", Kind::Text),
    ("pipelineId", Kind::Text),
    ("contractVersion", Kind::Text),
    ("releaseVersion", Kind::Text),
];

impl AwaitCheckpoint {
    /// The ten components in TPF's order (see [`AwaitCheckpoint`]'s fields).
    pub fn new(fields: [Option<&str>; 10]) -> Result<Self, JavaError> {
        let mut out = Vec::with_capacity(10);
        for ((name, _), value) in AWAIT_CHECKPOINT_PROPS.iter().zip(fields) {
            out.push(required(value, name)?.to_owned());
        }
        let mut it = out.into_iter();
        let mut next = || it.next().unwrap_or_default();
        Ok(Self {
            tenant_id: next(),
            execution_id: next(),
            interaction_id: next(),
            correlation_id: next(),
            unit_id: next(),
            step_id: next(),
            status: next(),
            pipeline_id: next(),
            contract_version: next(),
            release_version: next(),
        })
    }

    pub fn read(value: &Value, mapper: Mapper) -> Result<Self, JavaError> {
        read_flat(
            value,
            mapper,
            java::AWAIT_CHECKPOINT,
            AWAIT_CHECKPOINT_PROPS,
            |b| {
                let texts: Vec<Option<String>> = AWAIT_CHECKPOINT_PROPS
                    .iter()
                    .map(|(n, _)| b.text(n))
                    .collect();
                let mut fields = [None; 10];
                for (slot, t) in fields.iter_mut().zip(&texts) {
                    *slot = t.as_deref();
                }
                Self::new(fields)
            },
        )
    }
}

/// `AwsDurableCallbackSignal`: what the wake path hands a parked driver.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallbackSignal {
    pub tenant_id: String,
    pub execution_id: String,
    pub interaction_id: String,
    pub correlation_id: String,
    pub generation: i64,
    pub admitted_status: String,
}

impl CallbackSignal {
    /// TPF checks the five texts first and the generation last.
    pub fn new(identity: &AwaitIdentity, admitted_status: Option<&str>) -> Result<Self, JavaError> {
        let admitted_status = required(admitted_status, "admittedStatus")?.to_owned();
        Ok(Self {
            tenant_id: identity.tenant_id.clone(),
            execution_id: identity.execution_id.clone(),
            interaction_id: identity.interaction_id.clone(),
            correlation_id: identity.correlation_id.clone(),
            generation: identity.generation,
            admitted_status,
        })
    }

    pub fn read(value: &Value, mapper: Mapper) -> Result<Self, JavaError> {
        const PROPS: &[(&str, Kind)] = &[
            ("tenantId", Kind::Text),
            ("executionId", Kind::Text),
            ("interactionId", Kind::Text),
            ("correlationId", Kind::Text),
            ("generation", Kind::Long),
            ("admittedStatus", Kind::Text),
        ];
        read_flat(value, mapper, java::CALLBACK_SIGNAL, PROPS, |b| {
            let texts = [
                "tenantId",
                "executionId",
                "interactionId",
                "correlationId",
                "admittedStatus",
            ]
            .map(|n| b.text(n));
            for (name, t) in [
                "tenantId",
                "executionId",
                "interactionId",
                "correlationId",
                "admittedStatus",
            ]
            .iter()
            .zip(&texts)
            {
                required(t.as_deref(), name)?;
            }
            let generation = b.long("generation").unwrap_or(0);
            positive_generation(generation)?;
            let identity = AwaitIdentity::new(
                texts[0].as_deref(),
                texts[1].as_deref(),
                texts[2].as_deref(),
                texts[3].as_deref(),
                generation,
            )?;
            Self::new(&identity, texts[4].as_deref())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java_error::class;
    use serde_json::json;

    #[test]
    fn await_identity_writes_tpf_order_and_checks_in_tpf_order() {
        let id = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 2).unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            r#"{"tenantId":"t","executionId":"e","interactionId":"i","correlationId":"c","generation":2}"#
        );
        let e = AwaitIdentity::new(None, Some(" "), None, None, 0).unwrap_err();
        assert_eq!(e.to_string(), "NullPointerException: tenantId");
        let e = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "IllegalArgumentException: generation must be positive"
        );
    }

    #[test]
    fn a_nested_record_rule_surfaces_as_value_instantiation() {
        let v = json!({"tenantId": "t", "executionId": "e", "interactionId": "i", "correlationId": "\t"});
        let e = AwaitIdentity::read(&v, Mapper::Server).unwrap_err();
        assert_eq!(e.class, class::VALUE_INSTANTIATION);
        assert_eq!(
            e.root_cause().to_string(),
            "IllegalArgumentException: correlationId must not be blank"
        );
    }

    #[test]
    fn driver_checkpoint_generation_zero_is_refused() {
        let ex = ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r"))
            .unwrap();
        assert!(DriverCheckpoint::new(ex.clone(), 1).is_ok());
        assert_eq!(
            DriverCheckpoint::new(ex, 0).unwrap_err().message,
            "generation must be positive"
        );
    }

    #[test]
    fn callback_signal_round_trips_in_tpf_order() {
        let id = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 3).unwrap();
        let s = CallbackSignal::new(&id, Some("COMPLETED")).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(
            text,
            r#"{"tenantId":"t","executionId":"e","interactionId":"i","correlationId":"c","generation":3,"admittedStatus":"COMPLETED"}"#
        );
        let back = CallbackSignal::read(&serde_json::from_str(&text).unwrap(), Mapper::Caller);
        assert_eq!(back.unwrap(), s);
        let bad = json!({"tenantId":"t","executionId":"e","interactionId":"i","correlationId":"c","generation":0});
        assert_eq!(
            CallbackSignal::read(&bad, Mapper::Caller)
                .unwrap_err()
                .root_cause()
                .to_string(),
            "NullPointerException: admittedStatus"
        );
    }
}
