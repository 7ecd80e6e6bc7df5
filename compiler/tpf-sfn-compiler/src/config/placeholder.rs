//! Placeholder values: what a plain `compile` bakes in when `tpf-sfn.toml` does not name TPF's
//! action endpoint. They keep the embedded default compilable (the main job, the mapping proof),
//! but nothing deployable may carry one: `compile` warns, the exports refuse them, and `deploy`
//! refuses them against anything but a local emulator.

use super::{DriverConfig, GatewayBinding, GatewayTransport};
use crate::diagnostic::{Diagnostic, Location};

pub const GATEWAY_FUNCTION_ARN: &str = "binding.gateway.function-arn";
pub const GATEWAY_QUEUE_URL: &str = "binding.gateway.queue-url";
pub const STARTER_FUNCTION_ARN: &str = "binding.gateway.starter-function-arn";

/// Whether `value` of the config key `key` is a placeholder: the embedded default.
pub fn is_placeholder(key: &str, value: &str) -> bool {
    match key {
        GATEWAY_FUNCTION_ARN => value == GatewayBinding::default().function_arn,
        GATEWAY_QUEUE_URL => value == GatewayBinding::default().queue_url,
        STARTER_FUNCTION_ARN => value == GatewayBinding::default().starter_function_arn,
        _ => false,
    }
}

/// The config key behind each parameter the manifest records for a binding
/// (`manifest.binding.parameters`).
pub fn key_of_parameter(parameter: &str) -> Option<&'static str> {
    Some(match parameter {
        "gatewayFunctionArn" => GATEWAY_FUNCTION_ARN,
        "gatewayQueueUrl" => GATEWAY_QUEUE_URL,
        "starterFunctionArn" => STARTER_FUNCTION_ARN,
        _ => return None,
    })
}

/// `(key, value)` of every placeholder among the selected binding's parameters.
pub fn found<'a>(
    parameters: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(&'static str, String)> {
    parameters
        .into_iter()
        .filter_map(|(parameter, value)| {
            let key = key_of_parameter(parameter)?;
            is_placeholder(key, value).then(|| (key, value.to_owned()))
        })
        .collect()
}

/// The hint every placeholder finding carries.
pub fn hint(key: &str) -> String {
    format!(
        "set `{key}` in tpf-sfn.toml (`tpf-sfn init` writes one; `compile` reads ./tpf-sfn.toml, \
         or the file `--config` names) to the real value; placeholders only run against a local \
         emulator"
    )
}

impl DriverConfig {
    /// `(key, value)` of the gateway binding's placeholder parameters.
    pub fn placeholders(&self) -> Vec<(&'static str, String)> {
        let b = &self.binding;
        let mut pairs = vec![
            ("gatewayFunctionArn", b.gateway.function_arn.as_str()),
            (
                "starterFunctionArn",
                b.gateway.starter_function_arn.as_str(),
            ),
        ];
        if b.gateway.transport == GatewayTransport::Queue {
            pairs.push(("gatewayQueueUrl", b.gateway.queue_url.as_str()));
        }
        found(pairs)
    }

    /// One `CONFIG_PLACEHOLDER` warning per placeholder: compiling is fine, deploying is not.
    pub fn placeholder_warnings(&self, file: &str) -> Vec<Diagnostic> {
        self.placeholders()
            .into_iter()
            .map(|(key, value)| {
                Diagnostic::warning(
                    "CONFIG_PLACEHOLDER",
                    Location::pointer(file, key),
                    format!(
                        "`{key}` is the placeholder `{value}`: the compiled machines reach nothing \
                         real; `deploy` and the exports refuse them outside a local emulator"
                    ),
                )
                .with_hint(hint(key))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_placeholders() {
        let keys =
            |c: &DriverConfig| -> Vec<&str> { c.placeholders().iter().map(|(k, _)| *k).collect() };
        let mut real = DriverConfig::default();
        assert_eq!(keys(&real), [GATEWAY_FUNCTION_ARN, STARTER_FUNCTION_ARN]);
        let w = real.placeholder_warnings("tpf-sfn.toml");
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].code, "CONFIG_PLACEHOLDER");
        assert_eq!(w[0].location.pointer.as_deref(), Some(GATEWAY_FUNCTION_ARN));
        assert!(!w[0].is_error());

        // The gateway binding's three endpoints, the queue only on the queue transport.
        real.binding.gateway.transport = GatewayTransport::Queue;
        assert_eq!(
            keys(&real),
            [
                GATEWAY_FUNCTION_ARN,
                STARTER_FUNCTION_ARN,
                GATEWAY_QUEUE_URL
            ]
        );
        real.binding.gateway.function_arn =
            "arn:aws:lambda:eu-west-1:210987654321:function:gw:3".into();
        real.binding.gateway.starter_function_arn =
            "arn:aws:lambda:eu-west-1:210987654321:function:st".into();
        real.binding.gateway.queue_url = "http://localhost:4566/000000000000/gw".into();
        assert!(real.placeholders().is_empty());
        assert!(real.placeholder_warnings("tpf-sfn.toml").is_empty());
    }

    #[test]
    fn manifest_parameters_map_to_their_keys() {
        let found = found([
            (
                "gatewayQueueUrl",
                GatewayBinding::default().queue_url.as_str(),
            ),
            (
                "gatewayFunctionArn",
                "arn:aws:lambda:eu-west-1:210987654321:function:tpf:3",
            ),
            ("unknown", "x"),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, GATEWAY_QUEUE_URL);
    }
}
