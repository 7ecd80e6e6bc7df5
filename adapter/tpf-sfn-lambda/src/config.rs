//! The functions' settings, from their environment (the exported stacks set every one).

use std::time::Duration;

use tpf_sfn_wakepath::action_token::{ActionToken, ParameterToken};
use tpf_sfn_wakepath::aws::tables::TableNames;
use tpf_sfn_wakepath::bridge::{DurableFunctions, Machines};
use tpf_sfn_wakepath::gateway::invoke::is_numbered_version;
use tpf_sfn_wakepath::relay::http::HttpActionHost;

/// Which handler the binary runs: Lambda passes the function's `Handler` setting as `_HANDLER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    Bridge,
    Relay,
    /// A release's durable driver function (`durable-driver`).
    DurableDriver,
    /// A release's scheduled durable sweeper (`durable-sweeper`).
    DurableSweeper,
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
        ACTION_TOKEN, ACTION_TOKEN_PARAMETER, FUNCTION as DURABLE_FUNCTION, HANDLER as TPF_HANDLER,
        SPEC as DURABLE_SPEC, SWEEP_LIMIT,
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
            Some("bridge") => Ok(Handler::Bridge),
            Some("relay") => Ok(Handler::Relay),
            Some("durable-driver") => Ok(Handler::DurableDriver),
            Some("durable-sweeper") => Ok(Handler::DurableSweeper),
            Some(var::handler::WAKEUP) => Ok(Handler::GatewayWakeup),
            Some(var::handler::RECONCILER) => Ok(Handler::GatewayReconciler),
            Some(var::handler::STARTER) => Ok(Handler::GatewayStarter),
            other => Err(ConfigError(format!(
                "the function's Handler is {other:?}; it must be `bridge`, `relay`, `durable-driver`, `durable-sweeper`, `{}`, `{}` or `{}`",
                var::handler::WAKEUP,
                var::handler::RECONCILER,
                var::handler::STARTER
            ))),
        }
    }

    /// The bridge's tables and machines.
    pub fn bridge(&self) -> Result<(TableNames, Machines), ConfigError> {
        let tables = TableNames {
            execution: self.required(var::EXECUTION_TABLE)?,
            wakeup: self.required(var::WAKEUP_TABLE)?,
            ..TableNames::default()
        };
        Ok((tables, self.machines()?))
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

    /// The releases the bridge starts as durable functions (none when unset).
    pub fn durable_functions(&self) -> Result<DurableFunctions, ConfigError> {
        match self.get(var::DURABLE_FUNCTIONS) {
            None => Ok(DurableFunctions::default()),
            Some(json) => DurableFunctions::parse(&json)
                .map_err(|e| ConfigError(format!("{}: {}", var::DURABLE_FUNCTIONS, e.report()))),
        }
    }

    /// The durable sweeper's: the release's qualified function ARN, and sweep-once's `limit`.
    pub fn durable_sweeper(&self) -> Result<(String, usize), ConfigError> {
        let function = self.required(var::DURABLE_FUNCTION)?;
        // A version, not `$LATEST` or an unqualified name: recoveries stay on the release.
        if !is_numbered_version(&function) {
            return Err(ConfigError(format!(
                "{} is `{function}`; it must be a published version's ARN (`...:function:<name>:<version>`)",
                var::DURABLE_FUNCTION
            )));
        }
        let limit = self.required(var::SWEEP_LIMIT)?;
        let limit = limit
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| {
                ConfigError(format!(
                    "{} is `{limit}`; it must be a number from 1 to 1000",
                    var::SWEEP_LIMIT
                ))
            })?;
        Ok((function, limit))
    }

    /// The gateway the relay invokes when it carries the gateway binding's queue transport:
    /// the ARN of the gateway function's numbered version; `None` for the Action API's relay.
    pub fn gateway_function(&self) -> Result<Option<String>, ConfigError> {
        match self.get(var::GATEWAY_FUNCTION_ARN) {
            None => Ok(None),
            Some(arn) if numbered_version(&arn) => Ok(Some(arn)),
            Some(arn) => Err(ConfigError(format!(
                "{} is `{arn}`; it must be the ARN of a published version \
                 (arn:aws:lambda:<region>:<account>:function:<name>:<version>)",
                var::GATEWAY_FUNCTION_ARN
            ))),
        }
    }

    /// The Action API token: read at run time from the SSM parameter the stack names, or, in a
    /// local run only, the fixed token in `local` (the relay's `TPF_SFN_TOKEN`, the durable
    /// functions' `TPF_SFN_ACTION_TOKEN`). Both at once is refused: which one is meant?
    pub fn action_token(
        &self,
        local: &str,
        config: &aws_config::SdkConfig,
    ) -> Result<ActionToken, ConfigError> {
        match (self.get(var::ACTION_TOKEN_PARAMETER), self.get(local)) {
            (Some(_), Some(_)) => Err(ConfigError(format!(
                "both {} and {local} are set; a deployed function reads the parameter, {local} is for local runs only",
                var::ACTION_TOKEN_PARAMETER
            ))),
            (Some(name), None) => ParameterToken::from_config(config, &name)
                .map(|p| ActionToken::Parameter(p.into()))
                .map_err(|e| {
                    ConfigError(format!("{}: {}", var::ACTION_TOKEN_PARAMETER, e.report()))
                }),
            (None, local) => Ok(local.into()),
        }
    }

    /// The relay's client for the action host.
    pub fn relay(&self, config: &aws_config::SdkConfig) -> Result<HttpActionHost, ConfigError> {
        let url = self.required(var::ACTION_URL)?;
        let timeout = match self.get(var::ACTION_TIMEOUT_SECONDS) {
            None => 30,
            Some(s) => s
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    ConfigError(format!(
                        "{} is `{s}`; it must be a positive number of seconds",
                        var::ACTION_TIMEOUT_SECONDS
                    ))
                })?,
        };
        let token = self.action_token(var::TOKEN, config)?;
        HttpActionHost::new(&url, token, Duration::from_secs(timeout))
            .map_err(|e| ConfigError(format!("{}: {e}", var::ACTION_URL)))
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

    /// A configuration no test call reaches AWS with.
    fn sdk() -> aws_config::SdkConfig {
        aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new("us-east-1"))
            .build()
    }

    fn env(pairs: &[(&str, &str)]) -> Env<impl Fn(&str) -> Option<String>> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Env(move |k: &str| map.get(k).cloned())
    }

    #[test]
    fn the_handler_setting_picks_the_function() {
        assert_eq!(
            env(&[("_HANDLER", "bridge")]).handler(),
            Ok(Handler::Bridge)
        );
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
        assert_eq!(
            env(&[(var::TPF_HANDLER, "durable-sweeper")]).handler(),
            Ok(Handler::DurableSweeper)
        );
        let e = env(&[("_HANDLER", "main")]).handler().unwrap_err();
        assert!(e.to_string().starts_with("error[LAMBDA_CONFIG]"), "{e}");
        assert!(env(&[]).handler().is_err());
    }

    #[test]
    fn bridge_settings_are_required_and_checked() {
        let full = [
            (var::EXECUTION_TABLE, "x_exec"),
            (var::WAKEUP_TABLE, "x_wake"),
            (
                var::MACHINE_ARN_PREFIX,
                "arn:aws:states:eu-west-1:123456789012:stateMachine:",
            ),
            (var::NAME_PREFIX, "tpf"),
        ];
        let (tables, machines) = env(&full).bridge().unwrap();
        assert_eq!(
            (tables.execution.as_str(), tables.wakeup.as_str()),
            ("x_exec", "x_wake")
        );
        assert_eq!(machines.name_prefix, "tpf");
        for i in 0..full.len() {
            let mut missing = full.to_vec();
            let (name, _) = missing.remove(i);
            let e = env(&missing).bridge().unwrap_err();
            assert!(e.0.contains(name), "{e}");
        }
        let mut bad = full.to_vec();
        bad[2].1 = "arn:aws:states:eu-west-1:123456789012:";
        assert!(env(&bad).bridge().unwrap_err().0.contains(":stateMachine:"));
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
    fn the_sweeper_needs_a_published_version_and_a_limit() {
        let arn = "arn:aws:lambda:eu-west-1:123456789012:function:tpf-p:7";
        assert_eq!(
            env(&[(var::DURABLE_FUNCTION, arn), (var::SWEEP_LIMIT, "100")]).durable_sweeper(),
            Ok((arn.to_string(), 100))
        );
        for (function, limit) in [
            (
                "arn:aws:lambda:eu-west-1:123456789012:function:tpf-p",
                "100",
            ),
            (
                "arn:aws:lambda:eu-west-1:123456789012:function:tpf-p:$LATEST",
                "100",
            ),
            (arn, "0"),
            (arn, "1001"),
            (arn, "many"),
        ] {
            let e = env(&[(var::DURABLE_FUNCTION, function), (var::SWEEP_LIMIT, limit)])
                .durable_sweeper()
                .unwrap_err();
            assert!(e.0.contains("TPF_SFN_"), "{function} {limit}: {e}");
        }
        assert!(env(&[(var::SWEEP_LIMIT, "1")]).durable_sweeper().is_err());
    }

    #[test]
    fn the_gateway_relay_needs_a_numbered_version() {
        assert_eq!(env(&[]).gateway_function(), Ok(None));
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:7";
        assert_eq!(
            env(&[(var::GATEWAY_FUNCTION_ARN, arn)]).gateway_function(),
            Ok(Some(arn.to_owned()))
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

    #[test]
    fn relay_settings_are_required_and_checked() {
        assert!(env(&[(var::ACTION_URL, "http://tpf.internal:8080")])
            .relay(&sdk())
            .is_ok());
        assert!(env(&[])
            .relay(&sdk())
            .unwrap_err()
            .0
            .contains(var::ACTION_URL));
        assert!(env(&[(var::ACTION_URL, "https://tpf")])
            .relay(&sdk())
            .is_err());
        let e = env(&[
            (var::ACTION_URL, "http://tpf"),
            (var::ACTION_TIMEOUT_SECONDS, "0"),
        ])
        .relay(&sdk())
        .unwrap_err();
        assert!(e.0.contains(var::ACTION_TIMEOUT_SECONDS), "{e}");
    }

    #[test]
    fn the_token_is_a_checked_parameter_name_or_a_local_value_never_both() {
        let url = (var::ACTION_URL, "http://tpf");
        let parameter = env(&[(var::ACTION_TOKEN_PARAMETER, "/tpf/action-token")])
            .action_token(var::TOKEN, &sdk())
            .unwrap();
        assert!(
            matches!(&parameter, ActionToken::Parameter(p) if p.name() == "/tpf/action-token"),
            "{parameter:?}"
        );
        assert!(matches!(
            env(&[(var::TOKEN, "t")]).action_token(var::TOKEN, &sdk()),
            Ok(ActionToken::Local(_))
        ));
        assert!(matches!(
            env(&[]).action_token(var::TOKEN, &sdk()),
            Ok(ActionToken::None)
        ));
        for bad in ["tpf/action-token", "/tpf//x", "/aws/x"] {
            let e = env(&[url, (var::ACTION_TOKEN_PARAMETER, bad)])
                .relay(&sdk())
                .unwrap_err();
            assert!(e.0.contains("error[ACTION_TOKEN_PARAMETER]"), "{bad}: {e}");
        }
        let e = env(&[
            (var::ACTION_TOKEN_PARAMETER, "/tpf/action-token"),
            (var::ACTION_TOKEN, "t"),
        ])
        .action_token(var::ACTION_TOKEN, &sdk())
        .unwrap_err();
        assert!(e.0.contains("both"), "{e}");
    }
}
