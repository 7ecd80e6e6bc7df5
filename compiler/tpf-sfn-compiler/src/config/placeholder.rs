//! Placeholder values: what a plain `compile` bakes in when `tpf-sfn.toml` does not name TPF's
//! action endpoint. They keep the embedded default compilable (the main job, the mapping proof),
//! but nothing deployable may carry one: `compile` warns, the exports refuse them, and `deploy`
//! refuses them against anything but a local emulator.

use super::{
    BindingKind, DriverConfig, GatewayBinding, GatewayTransport, HttpBinding, LambdaBinding,
    QueueBinding,
};
use crate::diagnostic::{Diagnostic, Location};

pub const API_BASE_URL: &str = "binding.http.api-base-url";
pub const CONNECTION_ARN: &str = "binding.http.connection-arn";
pub const FUNCTION_ARN: &str = "binding.lambda.function-arn";
pub const QUEUE_URL: &str = "binding.queue.queue-url";
pub const GATEWAY_FUNCTION_ARN: &str = "binding.gateway.function-arn";
pub const GATEWAY_QUEUE_URL: &str = "binding.gateway.queue-url";
pub const STARTER_FUNCTION_ARN: &str = "binding.gateway.starter-function-arn";

/// Host names reserved for documentation (RFC 2606, RFC 6761): nothing real answers there.
fn reserved_host(url: &str) -> bool {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', ':', '?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('.')
        .to_ascii_lowercase();
    ["example.com", "example.net", "example.org"]
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        || [".example", ".test", ".invalid", ".localhost"]
            .iter()
            .any(|tld| host.ends_with(tld))
}

/// Whether `value` of the config key `key` is a placeholder: the embedded default, or (for the
/// endpoint) a host reserved for documentation.
pub fn is_placeholder(key: &str, value: &str) -> bool {
    match key {
        API_BASE_URL => value == HttpBinding::default().api_base_url || reserved_host(value),
        CONNECTION_ARN => value == HttpBinding::default().connection_arn,
        FUNCTION_ARN => value == LambdaBinding::default().function_arn,
        QUEUE_URL => value == QueueBinding::default().queue_url,
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
        "apiBaseUrl" => API_BASE_URL,
        "connectionArn" => CONNECTION_ARN,
        "functionArn" => FUNCTION_ARN,
        "queueUrl" => QUEUE_URL,
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
    /// `(key, value)` of the selected binding's placeholder parameters.
    pub fn placeholders(&self) -> Vec<(&'static str, String)> {
        let b = &self.binding;
        let pairs: Vec<(&str, &str)> = match b.kind {
            BindingKind::Http => vec![
                ("apiBaseUrl", b.http.api_base_url.as_str()),
                ("connectionArn", b.http.connection_arn.as_str()),
            ],
            BindingKind::Lambda => vec![("functionArn", b.lambda.function_arn.as_str())],
            BindingKind::Queue => vec![("queueUrl", b.queue.queue_url.as_str())],
            BindingKind::Gateway => {
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
                pairs
            }
        };
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
    fn defaults_and_documentation_hosts_are_placeholders() {
        // The embedded default is the gateway binding's; the http binding's, named.
        let keys =
            |c: &DriverConfig| -> Vec<&str> { c.placeholders().iter().map(|(k, _)| *k).collect() };
        let mut d = DriverConfig::default();
        assert_eq!(keys(&d), [GATEWAY_FUNCTION_ARN, STARTER_FUNCTION_ARN]);
        d.binding.kind = BindingKind::Http;
        assert_eq!(keys(&d), [API_BASE_URL, CONNECTION_ARN]);
        assert!(is_placeholder(
            API_BASE_URL,
            "https://actions.example.org/base"
        ));
        assert!(is_placeholder(API_BASE_URL, "https://tpf.internal.test"));
        assert!(!is_placeholder(API_BASE_URL, "https://tpf.acme.io"));
        assert!(!is_placeholder(API_BASE_URL, "https://notexample.com"));

        let mut real = d;
        real.binding.http.api_base_url = "https://tpf.acme.io".into();
        real.binding.http.connection_arn =
            "arn:aws:events:eu-west-1:210987654321:connection/tpf/1".into();
        assert!(real.placeholders().is_empty());
        assert!(real.placeholder_warnings("tpf-sfn.toml").is_empty());

        // Only the selected binding's parameters reach the machine.
        real.binding.kind = BindingKind::Queue;
        let w = real.placeholder_warnings("tpf-sfn.toml");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, "CONFIG_PLACEHOLDER");
        assert_eq!(w[0].location.pointer.as_deref(), Some(QUEUE_URL));
        assert!(!w[0].is_error());

        // The gateway binding's three endpoints, the queue only on the queue transport.
        real.binding.kind = BindingKind::Gateway;
        assert_eq!(keys(&real), [GATEWAY_FUNCTION_ARN, STARTER_FUNCTION_ARN]);
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
    }

    #[test]
    fn manifest_parameters_map_to_their_keys() {
        let found = found([
            ("queueUrl", QueueBinding::default().queue_url.as_str()),
            (
                "functionArn",
                "arn:aws:lambda:eu-west-1:210987654321:function:tpf",
            ),
            ("unknown", "x"),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, QUEUE_URL);
    }
}
