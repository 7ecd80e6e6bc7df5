//! The functions' settings, from their environment (the exported stacks set every one).

use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};
use tpf_sfn_wakepath::gateway::invoke::is_numbered_version;

/// Which handler the binary runs: Lambda passes the function's `Handler` setting as `_HANDLER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    /// The gateway binding's queue transport (`relay`).
    Relay,
    /// A release's durable driver function (`durable-driver`).
    DurableDriver,
    /// The gateway host's wake-up on TPF's await-interaction and binding table streams.
    GatewayWakeup,
    /// The gateway host's reconciler on the drivers' status-change events.
    GatewayReconciler,
    /// The gateway host's starter (TPF's ingress).
    GatewayStarter,
}

/// A setting is missing or malformed: the function cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error[LAMBDA_CONFIG]: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The variables the functions read: the names the exported stacks set (one list, the
/// compiler's), plus Lambda's own `_HANDLER`.
pub mod var {
    pub use tpf_sfn_compiler::sfn::export::stack::env::*;
    pub use tpf_sfn_compiler::sfn::export::stack::handler;
    /// Lambda's own: the function's `Handler` setting.
    pub const HANDLER: &str = "_HANDLER";
    /// The durable release stack's (its `Handler` is `bootstrap`, so it names the handler here).
    pub use tpf_sfn_compiler::durable::cloudformation::env::{
        HANDLER as TPF_HANDLER, SPEC as DURABLE_SPEC,
    };
}

/// The gateway a host function calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewaySetting {
    /// TPF's action gateway, by its numbered version ARN.
    Function(String),
    /// `serve`'s base URL.
    Url(String),
}

/// [`Env::gateway_host`]'s settings.
#[derive(Debug, Clone)]
pub struct GatewayHost {
    pub gateway: GatewaySetting,
    pub binding_table: String,
    pub drivers: Drivers,
}

/// The release's drivers: Step Functions machines, and the releases deployed as Lambda
/// durable functions.
#[derive(Debug, Clone)]
pub struct Drivers {
    pub machines: Machines,
    pub durable: DurableFunctions,
}

/// Reads settings through `get` (the process environment in the binary, a map in tests).
pub struct Env<F: Fn(&str) -> Option<String>>(pub F);

impl<F: Fn(&str) -> Option<String>> Env<F> {
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.trim().is_empty())
    }

    pub(crate) fn required(&self, name: &str) -> Result<String, ConfigError> {
        self.get(name)
            .ok_or_else(|| ConfigError(format!("{name} is not set")))
    }

    pub fn handler(&self) -> Result<Handler, ConfigError> {
        let chosen = self
            .get(var::TPF_HANDLER)
            .or_else(|| self.get(var::HANDLER));
        match chosen.as_deref() {
            Some("relay") => Ok(Handler::Relay),
            Some("durable-driver") => Ok(Handler::DurableDriver),
            // Action API v1's wake path: TPF does not serve Action API v1.
            Some(retired @ ("bridge" | "durable-sweeper")) => Err(ConfigError(format!(
                "the function's Handler is `{retired}`, Action API v1's wake path, which is retired \
                 (TPF does not serve Action API v1); deploy the gateway binding's wake-path stack"
            ))),
            Some(var::handler::WAKEUP) => Ok(Handler::GatewayWakeup),
            Some(var::handler::RECONCILER) => Ok(Handler::GatewayReconciler),
            Some(var::handler::STARTER) => Ok(Handler::GatewayStarter),
            other => Err(ConfigError(format!(
                "the function's Handler is {other:?}; it must be `relay`, `durable-driver`, `{}`, `{}` or `{}`",
                var::handler::WAKEUP,
                var::handler::RECONCILER,
                var::handler::STARTER
            ))),
        }
    }

    /// Where the release's driver machines are.
    fn machines(&self) -> Result<Machines, ConfigError> {
        let arn_prefix = self.required(var::MACHINE_ARN_PREFIX)?;
        if !arn_prefix.ends_with(":stateMachine:") {
            return Err(ConfigError(format!(
                "{} is `{arn_prefix}`; it must end in `:stateMachine:`",
                var::MACHINE_ARN_PREFIX
            )));
        }
        Ok(Machines {
            arn_prefix,
            name_prefix: self.required(var::NAME_PREFIX)?,
        })
    }

    /// The gateway host's settings: the gateway (its numbered version, or `serve`'s URL for
    /// the local loop), the binding table, and where each release's driver is.
    pub fn gateway_host(&self) -> Result<GatewayHost, ConfigError> {
        let gateway = match (self.get(var::GATEWAY_URL), self.get(var::GATEWAY_FUNCTION)) {
            (Some(url), _) => GatewaySetting::Url(url),
            (None, Some(arn)) if is_numbered_version(&arn) => GatewaySetting::Function(arn),
            (None, Some(arn)) => {
                return Err(ConfigError(format!(
                    "{} is `{arn}`; it must be the gateway's published version ARN (`...:function:<name>:<version>`)",
                    var::GATEWAY_FUNCTION
                )))
            }
            (None, None) => {
                return Err(ConfigError(format!(
                    "{} is not set (nor {})",
                    var::GATEWAY_FUNCTION,
                    var::GATEWAY_URL
                )))
            }
        };
        Ok(GatewayHost {
            gateway,
            binding_table: self.required(var::BINDING_TABLE)?,
            drivers: self.drivers()?,
        })
    }

    /// Where each release's driver is: the starter's only settings.
    pub fn drivers(&self) -> Result<Drivers, ConfigError> {
        Ok(Drivers {
            machines: self.machines()?,
            durable: self.durable_functions()?,
        })
    }

    /// The releases the gateway host starts as durable functions (none when unset).
    pub fn durable_functions(&self) -> Result<DurableFunctions, ConfigError> {
        match self.get(var::DURABLE_FUNCTIONS) {
            None => Ok(DurableFunctions::default()),
            Some(json) => DurableFunctions::parse(&json)
                .map_err(|e| ConfigError(format!("{}: {}", var::DURABLE_FUNCTIONS, e.report()))),
        }
    }

    /// The gateway the relay invokes (it carries the gateway binding's queue transport): the
    /// ARN of the gateway function's numbered version. Without it the relay would be Action API
    /// v1's, which is retired.
    pub fn gateway_function(&self) -> Result<String, ConfigError> {
        match self.get(var::GATEWAY_FUNCTION_ARN) {
            None => Err(ConfigError(format!(
                "{} is not set: the relay carries the gateway binding's queue transport only \
                 (Action API v1's relay is retired; TPF does not serve Action API v1)",
                var::GATEWAY_FUNCTION_ARN
            ))),
            Some(arn) if numbered_version(&arn) => Ok(arn),
            Some(arn) => Err(ConfigError(format!(
                "{} is `{arn}`; it must be the ARN of a published version \
                 (arn:aws:lambda:<region>:<account>:function:<name>:<version>)",
                var::GATEWAY_FUNCTION_ARN
            ))),
        }
    }
}

/// `…:function:<name>:<digits>`: a published version, never `$LATEST` or an alias.
fn numbered_version(arn: &str) -> bool {
    arn.rsplit_once(':').is_some_and(|(head, version)| {
        head.starts_with("arn:")
            && head.contains(":function:")
            && !head.ends_with(":function")
            && !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Env<impl Fn(&str) -> Option<String>> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Env(move |k: &str| map.get(k).cloned())
    }

    #[test]
    fn the_handler_setting_picks_the_function() {
        assert_eq!(env(&[("_HANDLER", "relay")]).handler(), Ok(Handler::Relay));
        assert_eq!(
            env(&[("_HANDLER", "durable-driver")]).handler(),
            Ok(Handler::DurableDriver)
        );
        // The durable release stack's `Handler` is `bootstrap`; its own variable names the handler.
        assert_eq!(
            env(&[
                ("_HANDLER", "bootstrap"),
                (var::TPF_HANDLER, "durable-driver")
            ])
            .handler(),
            Ok(Handler::DurableDriver)
        );
        // Action API v1's wake path is retired: its handlers say so.
        for retired in ["bridge", "durable-sweeper"] {
            let e = env(&[("_HANDLER", retired)]).handler().unwrap_err();
            assert!(e.0.contains("Action API v1"), "{retired}: {e}");
        }
        let e = env(&[("_HANDLER", "main")]).handler().unwrap_err();
        assert!(e.to_string().starts_with("error[LAMBDA_CONFIG]"), "{e}");
        assert!(env(&[]).handler().is_err());
    }

    #[test]
    fn the_durable_releases_are_optional_and_checked() {
        assert!(env(&[]).durable_functions().unwrap().is_empty());
        // The exported wake path's default: the parameter left empty.
        assert!(env(&[(var::DURABLE_FUNCTIONS, "")])
            .durable_functions()
            .unwrap()
            .is_empty());
        let map = env(&[(
            var::DURABLE_FUNCTIONS,
            r#"{"p@r2": "arn:aws:lambda:eu-west-1:123456789012:function:tpf-p:7"}"#,
        )])
        .durable_functions()
        .unwrap();
        assert_eq!(
            map.function("p", "r2"),
            Some("arn:aws:lambda:eu-west-1:123456789012:function:tpf-p:7")
        );
        assert_eq!(map.function("p", "r1"), None);
        for bad in [
            "[]",
            r#"{"no-release": "f"}"#,
            r#"{"p@": "f"}"#,
            r#"{"p@r": ""}"#,
        ] {
            let e = env(&[(var::DURABLE_FUNCTIONS, bad)])
                .durable_functions()
                .unwrap_err();
            assert!(e.0.contains(var::DURABLE_FUNCTIONS), "{bad}: {e}");
        }
    }

    #[test]
    fn the_gateway_relay_needs_a_numbered_version() {
        // Without a gateway there is nothing to relay to: Action API v1's relay is retired.
        let e = env(&[]).gateway_function().unwrap_err();
        assert!(e.0.contains("Action API v1"), "{e}");
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:7";
        assert_eq!(
            env(&[(var::GATEWAY_FUNCTION_ARN, arn)]).gateway_function(),
            Ok(arn.to_owned())
        );
        for bad in [
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:live",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:$LATEST",
        ] {
            let e = env(&[(var::GATEWAY_FUNCTION_ARN, bad)])
                .gateway_function()
                .unwrap_err();
            assert!(e.0.contains("published version"), "{bad}: {e}");
        }
    }
}
