//! The durable driver function: one published version per release, run by Lambda's durable
//! execution service. Each invocation replays the execution's checkpoints through
//! [`tpf_durable_driver::drive`] and goes on from the first operation not yet checkpointed;
//! [`ops`] is the one module that speaks the SDK.
//!
//! The release's spec comes from the version's environment ([`var::DURABLE_SPEC`]), not from
//! the zip: publishing a version freezes its environment with its code, so one zip serves every
//! release and each version stays pinned to the spec it was published with.
//!
//! The function decides nothing itself: every branch is the driver's, on TPF's answers.

pub mod call;
pub mod https;
pub mod ops;

use std::sync::Arc;

use serde_json::{json, Value};
use tpf_durable_driver::{DriverInput, DurableSpec, End};

use crate::config::{ConfigError, Env};

pub use crate::config::var;

/// Reads and checks the release's spec.
pub fn spec<F: Fn(&str) -> Option<String>>(env: &Env<F>) -> Result<DurableSpec, ConfigError> {
    let text = env.required(var::DURABLE_SPEC)?;
    let spec: DurableSpec = serde_json::from_str(&text).map_err(|e| {
        ConfigError(format!(
            "{} is not a durable driver spec: {e}",
            var::DURABLE_SPEC
        ))
    })?;
    if spec.format != tpf_durable_driver::spec::FORMAT {
        return Err(ConfigError(format!(
            "{} has format {}; this function reads format {}",
            var::DURABLE_SPEC,
            spec.format,
            tpf_durable_driver::spec::FORMAT
        )));
    }
    if spec.max_iterations == 0 {
        return Err(ConfigError(format!(
            "{} allows no iterations (maxIterations is 0)",
            var::DURABLE_SPEC
        )));
    }
    Ok(spec)
}

/// What every invocation of this function version shares.
pub struct Driver {
    pub spec: DurableSpec,
    pub action: call::ActionClient,
    pub ddb: aws_sdk_dynamodb::Client,
    pub lambda: aws_sdk_lambda::Client,
}

impl Driver {
    pub fn new<F: Fn(&str) -> Option<String>>(
        env: &Env<F>,
        config: &aws_config::SdkConfig,
    ) -> Result<Driver, ConfigError> {
        let spec = spec(env)?;
        let lambda = aws_sdk_lambda::Client::new(config);
        let action = call::ActionClient::new(
            &spec,
            env.action_token(var::ACTION_TOKEN, config)?,
            lambda.clone(),
        )?;
        Ok(Driver {
            spec,
            action,
            ddb: aws_sdk_dynamodb::Client::new(config),
            lambda,
        })
    }
}

/// What a generation's execution returns when it did not fail: how it ended.
pub fn output(end: &End) -> Value {
    serde_json::to_value(end).unwrap_or_else(|_| json!({}))
}

/// One invocation: the driver loop over this execution's checkpoints. A driver `Fail` fails the
/// durable execution with the driver's error name as its error type.
pub async fn handle(
    driver: Arc<Driver>,
    input: DriverInput,
    ctx: aws_durable_execution_sdk::DurableContext,
) -> Result<Value, aws_durable_execution_sdk::BoxError> {
    let engine = ops::SdkOps::new(ctx, driver.clone());
    let end = tpf_durable_driver::drive(&engine, &driver.spec, &input).await?;
    match end {
        End::Failed { error, cause } => Err(Box::new(
            aws_durable_execution_sdk::TypedError::with_type(error, cause),
        )),
        end => Ok(output(&end)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, String)]) -> Env<impl Fn(&str) -> Option<String>> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        Env(move |k: &str| map.get(k).cloned())
    }

    pub(crate) fn sample_spec() -> Value {
        json!({
            "format": 1,
            "identity": {"pipelineId": "p", "contractVersion": "c", "releaseVersion": "r1"},
            "binding": {"kind": "http", "apiBaseUrl": "http://127.0.0.1:8080"},
            "wakeup": {
                "tableName": "tpf_sfn_wakeup", "leaseWaitSeconds": 5, "recheckSeconds": 30,
                "lateRecheckSeconds": 5, "lateRecheckMaxSeconds": 300
            },
            "transportRetry": {"intervalSeconds": 1, "maxAttempts": 3, "backoffRate": 2.0, "maxDelaySeconds": 30},
            "actionTimeoutSeconds": 30,
            "operationBudget": 3000,
            "maxIterations": 500
        })
    }

    #[test]
    fn the_spec_comes_from_the_environment_and_is_checked() {
        let ok = sample_spec();
        let s = spec(&env(&[(var::DURABLE_SPEC, ok.to_string())])).unwrap();
        assert_eq!(s.identity.release_version, "r1");

        let e = spec(&env(&[])).unwrap_err();
        assert!(e.0.contains(var::DURABLE_SPEC), "{e}");

        let e = spec(&env(&[(var::DURABLE_SPEC, "{".into())])).unwrap_err();
        assert!(e.0.contains("not a durable driver spec"), "{e}");

        let mut other = ok.clone();
        other["format"] = json!(2);
        let e = spec(&env(&[(var::DURABLE_SPEC, other.to_string())])).unwrap_err();
        assert!(e.0.contains("format 2"), "{e}");

        let mut none = ok.clone();
        none["maxIterations"] = json!(0);
        assert!(spec(&env(&[(var::DURABLE_SPEC, none.to_string())])).is_err());

        let mut unknown = ok;
        unknown["extra"] = json!(true);
        assert!(spec(&env(&[(var::DURABLE_SPEC, unknown.to_string())])).is_err());
    }

    /// What `compile --backend lambda-durable` writes into the stack is what this function
    /// reads: the spec parses, and its https base gets the TLS client.
    #[test]
    fn the_compilers_spec_is_read_and_its_https_base_gets_the_tls_client() {
        let contract = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/contracts/restaurant-approval.pipeline-contract.json"
        ))
        .unwrap();
        let compiled = tpf_sfn_compiler::compile::compile(
            &tpf_sfn_compiler::compile::Input {
                contract_file: "restaurant-approval.pipeline-contract.json",
                contract: &contract,
                config: Some((
                    "tpf-sfn.toml",
                    "[binding]\nkind = \"http\"\n[binding.http]\napi-base-url = \"https://tpf.internal\"\n",
                )),
                ..Default::default()
            },
            tpf_sfn_compiler::durable::LambdaDurable,
        )
        .unwrap();
        let read = spec(&env(&[(
            var::DURABLE_SPEC,
            compiled.durable.spec_text.clone(),
        )]))
        .unwrap();
        assert_eq!(read, compiled.durable.spec);
        let client = call::ActionClient::new(
            &read,
            Some("t".to_string()).into(),
            aws_sdk_lambda::Client::from_conf(
                aws_sdk_lambda::Config::builder()
                    .behavior_version(aws_sdk_lambda::config::BehaviorVersion::latest())
                    .build(),
            ),
        )
        .unwrap();
        assert!(matches!(client, call::ActionClient::Https(_)));
    }

    #[test]
    fn an_ending_is_the_executions_output() {
        assert_eq!(output(&End::Succeeded), json!({"end": "succeeded"}));
        assert_eq!(
            output(&End::HandedOver {
                next: "e-g1".into()
            }),
            json!({"end": "handedOver", "next": "e-g1"})
        );
    }
}
