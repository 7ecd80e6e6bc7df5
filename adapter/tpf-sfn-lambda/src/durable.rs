//! The durable driver function: one published version per release, run by Lambda's durable
//! execution service. Each invocation replays the execution's checkpoints through
//! [`tpf_durable_driver::drive_gateway`] and goes on from the first operation not yet
//! checkpointed; [`ops`] and [`gateway`] are the modules that speak the SDK.
//!
//! The release's spec comes from the version's environment ([`var::DURABLE_SPEC`]), not from
//! the zip: publishing a version freezes its environment with its code, so one zip serves every
//! release and each version stays pinned to the spec it was published with.
//!
//! The function decides nothing itself: every branch is the driver's, on TPF's answers.

pub mod gateway;
pub mod ops;

use std::sync::Arc;

use serde_json::Value;
use tpf_durable_driver::spec::Binding;
use tpf_durable_driver::{DurableSpec, GatewayRun};
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
    Ok(spec)
}

/// What every invocation of this function version shares.
pub struct Driver {
    pub spec: DurableSpec,
    /// TPF's action gateway, the numbered version the spec names.
    pub gateway: gateway::GatewayClient,
    pub lambda: aws_sdk_lambda::Client,
}

impl Driver {
    pub fn new<F: Fn(&str) -> Option<String>>(
        env: &Env<F>,
        config: &aws_config::SdkConfig,
    ) -> Result<Driver, ConfigError> {
        let spec = spec(env)?;
        let lambda = aws_sdk_lambda::Client::new(config);
        let Binding::Gateway { function_arn, .. } = &spec.binding;
        let gateway = gateway::GatewayClient {
            client: lambda.clone(),
            function_arn: function_arn.clone(),
        };
        Ok(Driver {
            spec,
            gateway,
            lambda,
        })
    }
}

/// One invocation: the gateway driver over this execution's checkpoints, on TPF's
/// `AwsDurableExecutionInput`. A driver `Fail` fails the durable execution with the driver's
/// error name as its error type.
pub async fn handle(
    driver: Arc<Driver>,
    input: Value,
    ctx: aws_durable_execution_sdk::DurableContext,
) -> Result<Value, aws_durable_execution_sdk::BoxError> {
    let Binding::Gateway {
        longest_await_seconds,
        scheduled_sweep,
        ..
    } = driver.spec.binding;
    // The coordinator function's SerDes: exact keys, unknown ones ignored.
    let input = ExecutionInput::read_value(&input, Mapper::Durable).map_err(|e| {
        aws_durable_execution_sdk::TypedError::with_type(e.class, e.root_cause().message.clone())
    })?;
    let engine = ops::SdkOps::new(ctx, driver.clone());
    let run = GatewayRun {
        longest_await_seconds,
        scheduled_sweep,
    };
    match tpf_durable_driver::drive_gateway(&engine, &run, &input).await? {
        Ok(end) => Ok(serde_json::to_value(end)?),
        Err(f) => Err(Box::new(aws_durable_execution_sdk::TypedError::with_type(
            f.error, f.cause,
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
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
            "binding": {
                "kind": "gateway",
                "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:7",
                "longestAwaitSeconds": 1800
            },
            "actionTimeoutSeconds": 30
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

        let mut unknown = ok.clone();
        unknown["extra"] = json!(true);
        assert!(spec(&env(&[(var::DURABLE_SPEC, unknown.to_string())])).is_err());

        // A spec compiled for Action API v1 carries its retired fields: refused, not read.
        for (key, value) in [
            ("wakeup", json!({"tableName": "tpf_sfn_wakeup"})),
            ("transportRetry", json!({"maxAttempts": 6})),
            ("maxIterations", json!(117)),
        ] {
            let mut v1 = ok.clone();
            v1[key] = value;
            let e = spec(&env(&[(var::DURABLE_SPEC, v1.to_string())])).unwrap_err();
            assert!(e.0.contains(key), "{key}: {e}");
        }
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

    /// `compile --backend lambda-durable` with the gateway binding writes a spec that makes
    /// this function the gateway driver, invoking the configured numbered version.
    #[test]
    fn the_compilers_gateway_spec_makes_a_gateway_driver() {
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:tpf-gateway:7";
        let config = format!(
            "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{arn}\"\nstarter-function-arn = \"arn:aws:lambda:us-east-1:123456789012:function:tpf-starter:3\"\n"
        );
        let (read, compiled) = compiled_spec(&config);
        assert_eq!(read, compiled.durable.spec);
        let Binding::Gateway {
            function_arn,
            longest_await_seconds,
            ..
        } = &read.binding;
        assert_eq!(function_arn, arn);
        assert!(*longest_await_seconds > 0);
    }
}
