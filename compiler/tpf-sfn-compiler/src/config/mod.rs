//! Driver configuration (`tpf-sfn.toml`). Every field has a default, so compiling with no file at
//! all is the embedded default. Values are validated by [`DriverConfig::check`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, Diagnostics, Location};

mod annotated;
mod check;
pub mod placeholder;
pub mod retired;
mod shape;

pub(crate) use shape::is_numbered_version;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct DriverConfig {
    /// Prefix of every resource name this tool creates (state machines, roles, schedules).
    pub name_prefix: String,
    pub binding: BindingConfig,
    pub aws: AwsConfig,
    pub timeouts: TimeoutConfig,
    pub history: HistoryConfig,
    pub sweeper: SweeperConfig,
    pub logging: LoggingConfig,
    pub tracing: TracingConfig,
    /// Extra tags for every machine, next to the identity tags the compiler always adds.
    pub tags: BTreeMap<String, String>,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            name_prefix: "tpf".to_string(),
            binding: BindingConfig::default(),
            aws: AwsConfig::default(),
            timeouts: TimeoutConfig::default(),
            history: HistoryConfig::default(),
            sweeper: SweeperConfig::default(),
            logging: LoggingConfig::default(),
            tracing: TracingConfig::default(),
            tags: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindingKind {
    /// Action API v1's bindings, retired: parsed only so that naming one is refused with
    /// `ACTION_API_V1_RETIRED` rather than an unknown value. Nothing compiles them.
    Http,
    Lambda,
    Queue,
    /// TPF's action gateway (`docs/gateway.md`): the driver follows TPF's own coordinator
    /// protocol, the one protocol TPF serves.
    Gateway,
}

impl BindingKind {
    /// Action API v1's bindings, each refused.
    pub const ACTION_API_V1: [BindingKind; 3] =
        [BindingKind::Http, BindingKind::Lambda, BindingKind::Queue];

    pub fn as_str(self) -> &'static str {
        match self {
            BindingKind::Http => "http",
            BindingKind::Lambda => "lambda",
            BindingKind::Queue => "queue",
            BindingKind::Gateway => "gateway",
        }
    }

    pub fn is_action_api_v1(self) -> bool {
        self != BindingKind::Gateway
    }
}

/// How the driver reaches TPF: its action gateway, through `[binding.gateway]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct BindingConfig {
    pub kind: BindingKind,
    pub gateway: GatewayBinding,
}

impl Default for BindingConfig {
    fn default() -> Self {
        BindingConfig {
            kind: BindingKind::Gateway,
            gateway: GatewayBinding::default(),
        }
    }
}

/// How the gateway driver reaches TPF's action gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatewayTransport {
    /// Step Functions invokes the gateway's numbered version itself.
    Lambda,
    /// Step Functions sends each request to an SQS queue; a relay invokes the gateway and
    /// answers the task token (a local emulator that cannot run a Lambda function, or a
    /// gateway only reachable that way).
    Queue,
}

impl GatewayTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            GatewayTransport::Lambda => "lambda",
            GatewayTransport::Queue => "queue",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct GatewayBinding {
    /// ARN of TPF's action gateway function, qualified by a numbered version (never an alias or
    /// the unqualified name: a release's driver calls exactly the gateway it was compiled for).
    pub function_arn: String,
    pub transport: GatewayTransport,
    /// SQS queue the relay reads gateway requests from (transport = "queue").
    pub queue_url: String,
    /// ARN of the starter function the driver hands over through: it starts the next
    /// generation named by TPF's recipe (Step Functions cannot compute the name itself).
    pub starter_function_arn: String,
    /// The await timeout of a contract await that does not carry its own (August 2026's
    /// contracts left it to TPF's YAML): the driver parks at most the longest await timeout
    /// plus one second before it sweeps.
    pub await_timeout_seconds: u64,
}

impl Default for GatewayBinding {
    fn default() -> Self {
        GatewayBinding {
            function_arn: "arn:aws:lambda:us-east-1:123456789012:function:tpf-action-gateway:1"
                .to_string(),
            transport: GatewayTransport::Lambda,
            queue_url: "https://sqs.us-east-1.amazonaws.com/123456789012/tpf-sfn-gateway"
                .to_string(),
            starter_function_arn:
                "arn:aws:lambda:us-east-1:123456789012:function:tpf-sfn-starter:1".to_string(),
            await_timeout_seconds: 1800,
        }
    }
}

/// Where ARNs in policies point. Unset values become `*` in policies, scoped still by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct AwsConfig {
    pub partition: Option<String>,
    pub region: Option<String>,
    pub account_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct TimeoutConfig {
    /// TimeoutSeconds of one gateway call (and, on Lambda durable functions, the driver
    /// function's timeout less a margin).
    pub action_call_seconds: u64,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        TimeoutConfig {
            action_call_seconds: 60,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct HistoryConfig {
    /// Most history events one driver generation may emit before it must roll over. Step
    /// Functions fails an execution at 25,000; the default leaves room for console redrives.
    pub event_budget: u32,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig {
            event_budget: 20_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SweeperConfig {
    /// Who sweeps TPF (its `SWEEP`: await timeouts, due work, item continuations).
    pub mode: SweepMode,
    /// EventBridge Scheduler expression of the scheduled sweep (`mode = "schedule"`).
    pub schedule: String,
}

impl Default for SweeperConfig {
    fn default() -> Self {
        SweeperConfig {
            mode: SweepMode::Driver,
            schedule: "rate(1 minute)".to_string(),
        }
    }
}

/// Who calls TPF's `SWEEP`. TPF's sweep is global (`sweepOnce(now)`, the tenant ignored), so
/// one caller on a schedule does for every execution what every driver's poll otherwise does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepMode {
    /// Every driver sweeps before every STATUS it polls, as TPF's own driver does.
    Driver,
    /// The wake-path stack sweeps on `sweeper.schedule`; a driver sweeps only at its start,
    /// while TPF's record waits to retry (so a retry is queued no later than TPF's own driver
    /// queues it) and after a park. A poll round is then one gateway call fewer (and one
    /// transition fewer on Step Functions).
    Schedule,
}

/// The period of an EventBridge Scheduler `rate(<n> <unit>)` expression, in seconds; `None`
/// for anything else (a `cron(...)` has no fixed period).
pub fn rate_period_seconds(expression: &str) -> Option<u64> {
    let inner = expression.trim().strip_prefix("rate(")?.strip_suffix(')')?;
    let mut words = inner.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let unit = match words.next()? {
        "minute" | "minutes" => 60,
        "hour" | "hours" => 3_600,
        "day" | "days" => 86_400,
        _ => return None,
    };
    (n > 0 && words.next().is_none()).then(|| n.saturating_mul(unit))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum LogLevel {
    All,
    Error,
    Fatal,
    Off,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct LoggingConfig {
    pub level: LogLevel,
    pub include_execution_data: bool,
    /// CloudWatch Logs log group ARN (must end in `:*`); required unless `level = "OFF"`.
    pub log_group_arn: Option<String>,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        LoggingConfig {
            level: LogLevel::Off,
            include_execution_data: false,
            log_group_arn: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct TracingConfig {
    /// X-Ray tracing on the machines.
    pub enabled: bool,
}

/// Where a byte offset of `text` sits, 1-based (column in characters).
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let col_bytes = before.get(line_start..).unwrap_or_default();
    (line, String::from_utf8_lossy(col_bytes).chars().count() + 1)
}

fn toml_location(file: &str, text: &str, err: &toml::de::Error) -> Location {
    match err.span() {
        Some(span) => {
            let (line, column) = line_col(text, span.start);
            Location::position(file, line, column)
        }
        None => Location::file(file),
    }
}

/// toml's messages span lines; a diagnostic message is one line.
fn one_line(message: &str) -> String {
    message
        .trim()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

impl DriverConfig {
    /// Parses `tpf-sfn.toml`. Syntax errors are `CONFIG_SYNTAX`; an Action API v1 binding's
    /// table or any other key only v1 read is `ACTION_API_V1_RETIRED` (`retired.rs`); unknown keys and wrongly typed values
    /// are `CONFIG_FIELD` with the dotted key. Values are not range-checked here: that
    /// is [`DriverConfig::check`], so a caller can report both kinds together.
    pub fn from_toml(file: &str, text: &str) -> Result<DriverConfig, Diagnostics> {
        let table = match text.parse::<toml::Table>() {
            Ok(table) => table,
            Err(e) => return Err(Diagnostic::error(
                "CONFIG_SYNTAX",
                toml_location(file, text, &e),
                format!("the file is not valid TOML: {}", one_line(e.message())),
            )
            .with_hint("fix the TOML at the reported line and column; `tpf-sfn init` writes a valid, annotated default to start from")
            .into()),
        };
        let mut v1_tables = retired::tables(file, &table);
        v1_tables.extend(retired::keys(file, &table));
        if !v1_tables.is_empty() {
            return Err(Diagnostics(v1_tables));
        }
        serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.inner();
            let mut location = toml_location(file, text, inner);
            if key != "." {
                location.pointer = Some(key.clone());
            }
            Diagnostic::error("CONFIG_FIELD", location, format!("`{key}`: {}", one_line(inner.message())))
                .with_hint(
                    "check the key's spelling and type against the file `tpf-sfn init` writes, which lists every \
                     key with its default",
                )
                .into()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheduled_sweep_needs_a_rate_whose_period_the_proof_runs() {
        for (expr, period) in [
            ("rate(1 minute)", Some(60)),
            (" rate(5 minutes) ", Some(300)),
            ("rate(2 hours)", Some(7_200)),
            ("rate(1 day)", Some(86_400)),
            ("rate(0 minutes)", None),
            ("rate(1 fortnight)", None),
            ("rate(1 minute extra)", None),
            ("cron(0/5 * * * ? *)", None),
        ] {
            assert_eq!(rate_period_seconds(expr), period, "{expr}");
        }
        let mut config = DriverConfig::default();
        config.sweeper.mode = SweepMode::Schedule;
        assert!(config.check("tpf-sfn.toml").is_empty());
        config.sweeper.schedule = "cron(0/5 * * * ? *)".into();
        let bad = config.check("tpf-sfn.toml");
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(bad[0].code, "CONFIG_VALUE");
        assert!(bad[0].message.contains("needs a rate(...)"), "{bad:?}");
        // The driver's own sweeping takes any schedule the scheduler takes.
        config.sweeper.mode = SweepMode::Driver;
        assert!(config.check("tpf-sfn.toml").is_empty());
    }

    #[test]
    fn annotated_default_parses_back_to_the_embedded_default() {
        let text = DriverConfig::annotated_default();
        assert_eq!(
            DriverConfig::from_toml("default.toml", &text),
            Ok(DriverConfig::default())
        );
        assert!(text.contains("\nkind = \"gateway\"\n"), "{text}");
        assert_eq!(DriverConfig::default().binding.kind, BindingKind::Gateway);
    }

    #[test]
    fn default_passes_its_own_checks() {
        assert_eq!(DriverConfig::default().check("default.toml"), Vec::new());
    }

    #[test]
    fn empty_file_is_the_default() {
        assert_eq!(
            DriverConfig::from_toml("empty.toml", ""),
            Ok(DriverConfig::default())
        );
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_col("a\nbé c", 6), (2, 4));
    }
}
