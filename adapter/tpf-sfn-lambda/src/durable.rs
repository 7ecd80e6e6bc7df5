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
pub mod gateway;
pub mod https;
pub mod ops;

use std::sync::Arc;

use serde_json::{json, Value};
use tpf_durable_driver::spec::Binding;
use tpf_durable_driver::{DriverInput, DurableSpec, End, GatewayRun};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::Mapper;

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
    /// The Action API v1 client (bindings `http`, `lambda`); `None` for the gateway binding.
    pub action: Option<call::ActionClient>,
    /// TPF's action gateway (binding `gateway`); `None` for the Action API v1 bindings.
    pub gateway: Option<gateway::GatewayClient>,
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
        let (action, gateway) = match &spec.binding {
            Binding::Gateway { function_arn, .. } => (
                None,
                Some(gateway::GatewayClient {
                    client: lambda.clone(),
                    function_arn: function_arn.clone(),
                }),
            ),
            _ => (
                Some(call::ActionClient::new(
                    &spec,
                    env.action_token(var::ACTION_TOKEN, config)?,
                    lambda.clone(),
                )?),
                None,
            ),
        };
        Ok(Driver {
            spec,
            action,
            gateway,
            ddb: aws_sdk_dynamodb::Client::new(config),
            lambda,
        })
    }
}

/// What a generation's execution returns when it did not fail: how it ended.
pub fn output(end: &End) -> Value {
    serde_json::to_value(end).unwrap_or_else(|_| json!({}))
}

/// One invocation: the release's driver over this execution's checkpoints: the gateway
/// driver on TPF's `AwsDurableExecutionInput` for the gateway binding, the Action API v1 loop
/// on its generation input otherwise. A driver `Fail` fails the durable execution with the
/// driver's error name as its error type.
pub async fn handle(
    driver: Arc<Driver>,
    input: Value,
    ctx: aws_durable_execution_sdk::DurableContext,
) -> Result<Value, aws_durable_execution_sdk::BoxError> {
    if let Binding::Gateway {
        longest_await_seconds,
        scheduled_sweep,
        ..
    } = driver.spec.binding
    {
        // The coordinator function's SerDes: exact keys, unknown ones ignored.
        let input = ExecutionInput::read_value(&input, Mapper::Durable).map_err(|e| {
            aws_durable_execution_sdk::TypedError::with_type(
                e.class,
                e.root_cause().message.clone(),
            )
        })?;
        let engine = ops::SdkOps::new(ctx, driver.clone());
        let run = GatewayRun {
            longest_await_seconds,
            scheduled_sweep,
        };
        return match tpf_durable_driver::drive_gateway(&engine, &run, &input).await? {
            Ok(end) => Ok(serde_json::to_value(end)?),
            Err(f) => Err(Box::new(aws_durable_execution_sdk::TypedError::with_type(
                f.error, f.cause,
            ))),
        };
    }
    let input: DriverInput = serde_json::from_value(input)?;
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

    /// The restaurant contract compiled for this backend under `config`, and its spec as this
    /// function reads it from the environment.
    fn compiled_spec(config: &str) -> (DurableSpec, tpf_sfn_compiler::durable::Compiled) {
        let contract = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/contracts/restaurant-approval.pipeline-contract.json"
        ))
        .unwrap();
        let compiled = tpf_sfn_compiler::compile::compile(
            &tpf_sfn_compiler::compile::Input {
                contract_file: "restaurant-approval.pipeline-contract.json",
                contract: &contract,
                config: Some(("tpf-sfn.toml", config)),
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
        (read, compiled)
    }

    /// What `compile --backend lambda-durable` writes into the stack is what this function
    /// reads: the spec parses, and its https base gets the TLS client.
    #[test]
    fn the_compilers_spec_is_read_and_its_https_base_gets_the_tls_client() {
        let (read, compiled) = compiled_spec(
            "[binding]\nkind = \"http\"\n[binding.http]\napi-base-url = \"https://tpf.internal\"\n",
        );
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

    /// `compile --backend lambda-durable` with the gateway binding writes a spec that makes
    /// this function the gateway driver, invoking the configured numbered version.
    #[test]
    fn the_compilers_gateway_spec_makes_a_gateway_driver() {
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:7";
        let config = format!(
            "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{arn}\"\nstarter-function-arn = \"arn:aws:lambda:us-east-1:123456789012:function:tpf-starter:3\"\n"
        );
        let (read, _) = compiled_spec(&config);
        let Binding::Gateway {
            function_arn,
            longest_await_seconds,
            ..
        } = &read.binding
        else {
            panic!("a gateway binding: {:?}", read.binding);
        };
        assert_eq!(function_arn, arn);
        assert!(*longest_await_seconds > 0);
        let lambda = aws_sdk_lambda::Client::from_conf(
            aws_sdk_lambda::Config::builder()
                .behavior_version(aws_sdk_lambda::config::BehaviorVersion::latest())
                .build(),
        );
        assert!(call::ActionClient::new(&read, None::<String>.into(), lambda).is_err());
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
