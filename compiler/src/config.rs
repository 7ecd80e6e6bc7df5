//! Driver configuration (`tpf-sfn.toml`). Every field has a default, so compiling with no file at
//! all is the embedded default. Values are validated by [`DriverConfig::check`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, Diagnostics, Location};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct DriverConfig {
    /// Prefix of every resource name this tool creates (state machines, roles, schedules).
    pub name_prefix: String,
    pub binding: BindingConfig,
    pub aws: AwsConfig,
    pub wakeup: WakeupConfig,
    pub timeouts: TimeoutConfig,
    pub transport_retry: TransportRetryConfig,
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
            wakeup: WakeupConfig::default(),
            timeouts: TimeoutConfig::default(),
            transport_retry: TransportRetryConfig::default(),
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
    Http,
    Lambda,
    Queue,
}

impl BindingKind {
    pub const ALL: [BindingKind; 3] = [BindingKind::Http, BindingKind::Lambda, BindingKind::Queue];

    pub fn as_str(self) -> &'static str {
        match self {
            BindingKind::Http => "http",
            BindingKind::Lambda => "lambda",
            BindingKind::Queue => "queue",
        }
    }
}

/// How action Task states reach TPF. Only the parameters of the selected `kind` are used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct BindingConfig {
    pub kind: BindingKind,
    pub http: HttpBinding,
    pub lambda: LambdaBinding,
    pub queue: QueueBinding,
}

impl Default for BindingConfig {
    fn default() -> Self {
        BindingConfig {
            kind: BindingKind::Http,
            http: HttpBinding::default(),
            lambda: LambdaBinding::default(),
            queue: QueueBinding::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct HttpBinding {
    /// Base URL of TPF's action API (HTTPS; Step Functions HTTP Tasks refuse plain HTTP).
    pub api_base_url: String,
    /// EventBridge connection that holds the action API's credentials.
    pub connection_arn: String,
}

impl Default for HttpBinding {
    fn default() -> Self {
        HttpBinding {
            api_base_url: "https://tpf.example.com".to_string(),
            connection_arn:
                "arn:aws:events:us-east-1:123456789012:connection/tpf-actions/00000000-0000-0000-0000-000000000000"
                    .to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct LambdaBinding {
    /// ARN of the function that serves TPF's actions.
    pub function_arn: String,
}

impl Default for LambdaBinding {
    fn default() -> Self {
        LambdaBinding {
            function_arn: "arn:aws:lambda:us-east-1:123456789012:function:tpf-actions".to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct QueueBinding {
    /// SQS queue the relay reads action requests from.
    pub queue_url: String,
}

impl Default for QueueBinding {
    fn default() -> Self {
        QueueBinding {
            queue_url: "https://sqs.us-east-1.amazonaws.com/123456789012/tpf-sfn-actions"
                .to_string(),
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
pub struct WakeupConfig {
    /// Adapter-owned DynamoDB table for task tokens and the live-driver pointer.
    pub table_name: String,
    /// Seconds to wait when TPF reports the execution leased by another caller (TPF `lease-ms`).
    pub lease_wait_seconds: u64,
    /// Seconds to wait before re-asking TPF when a wakeup could not be registered.
    pub recheck_seconds: u64,
    /// Seconds between re-asks while TPF keeps an execution parked after its await deadline
    /// passed (a TPF that does not apply the timeout): bounds the calls per day.
    pub late_recheck_seconds: u64,
}

impl Default for WakeupConfig {
    fn default() -> Self {
        WakeupConfig {
            table_name: "tpf_sfn_wakeup".to_string(),
            lease_wait_seconds: 30,
            recheck_seconds: 60,
            late_recheck_seconds: 3600,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct TimeoutConfig {
    /// TimeoutSeconds of one action call. HTTP Tasks are capped at 60 s by Step Functions.
    pub action_call_seconds: u64,
    /// TimeoutSeconds of one sweep-once call.
    pub sweep_call_seconds: u64,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        TimeoutConfig {
            action_call_seconds: 60,
            sweep_call_seconds: 60,
        }
    }
}

/// Retries of the *transport* of an action call. TPF owns business retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct TransportRetryConfig {
    pub interval_seconds: u64,
    pub max_attempts: u64,
    pub backoff_rate: f64,
    pub max_delay_seconds: u64,
}

impl Default for TransportRetryConfig {
    fn default() -> Self {
        TransportRetryConfig {
            interval_seconds: 2,
            max_attempts: 6,
            backoff_rate: 2.0,
            max_delay_seconds: 60,
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
    /// EventBridge Scheduler expression that starts the sweeper.
    pub schedule: String,
    /// `limit` passed to sweep-once.
    pub limit: u32,
    /// Most due executions the sweeper handles concurrently.
    pub max_concurrency: u32,
}

impl Default for SweeperConfig {
    fn default() -> Self {
        SweeperConfig {
            schedule: "rate(1 minute)".to_string(),
            limit: 100,
            max_concurrency: 10,
        }
    }
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

fn value_error(
    file: &str,
    key: &str,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Diagnostic {
    Diagnostic::error("CONFIG_VALUE", Location::pointer(file, key), message).with_hint(hint)
}

fn is_digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// `arn:<partition>:<service>:<region>:<12 digits>:<resource>` with non-empty partition and region.
fn arn_resource<'a>(arn: &'a str, service: &str) -> Option<&'a str> {
    let mut parts = arn.splitn(6, ':');
    let ok = parts.next() == Some("arn")
        && parts.next().is_some_and(|p| !p.is_empty())
        && parts.next() == Some(service)
        && parts.next().is_some_and(|r| !r.is_empty())
        && parts.next().is_some_and(|a| is_digits(a, 12));
    if ok {
        parts.next()
    } else {
        None
    }
}

fn is_connection_arn(arn: &str) -> bool {
    let Some(res) = arn_resource(arn, "events") else {
        return false;
    };
    let mut parts = res.split('/');
    parts.next() == Some("connection")
        && parts.next().is_some_and(is_name)
        && parts.next().is_some_and(is_name)
        && parts.next().is_none()
}

fn is_function_arn(arn: &str) -> bool {
    let Some(res) = arn_resource(arn, "lambda") else {
        return false;
    };
    let mut parts = res.split(':');
    parts.next() == Some("function")
        && parts.next().is_some_and(is_name)
        && parts.next().is_none_or(is_name)
        && parts.next().is_none()
}

fn is_queue_url(url: &str) -> bool {
    let local = ["http://127.0.0.1", "http://localhost"].iter().any(|p| {
        url.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with(':') || rest.starts_with('/'))
    });
    if local {
        return true;
    }
    let Some(rest) = url.strip_prefix("https://sqs.") else {
        return false;
    };
    let mut parts = rest.split('/');
    let host_ok = parts
        .next()
        .and_then(|h| h.split_once(".amazonaws.com"))
        .is_some_and(|(region, tail)| !region.is_empty() && (tail.is_empty() || tail == ".cn"));
    host_ok
        && parts.next().is_some_and(|a| is_digits(a, 12))
        && parts.next().is_some_and(is_name)
        && parts.next().is_none()
}

const RESERVED_TAG_PREFIXES: &[&str] = &["aws:", "tpf-sfn:"];
const MAX_USER_TAGS: usize = 40;

impl DriverConfig {
    /// Parses `tpf-sfn.toml`. Syntax errors are `CONFIG_SYNTAX`; unknown keys and wrongly typed
    /// values are `CONFIG_FIELD` with the dotted key. Values are not range-checked here: that
    /// is [`DriverConfig::check`], so a caller can report both kinds together.
    pub fn from_toml(file: &str, text: &str) -> Result<DriverConfig, Diagnostics> {
        if let Err(e) = text.parse::<toml::Table>() {
            return Err(Diagnostic::error(
                "CONFIG_SYNTAX",
                toml_location(file, text, &e),
                format!("the file is not valid TOML: {}", one_line(e.message())),
            )
            .with_hint("fix the TOML at the reported line and column; `tpf-sfn init` writes a valid, annotated default to start from")
            .into());
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

    /// Range and shape checks (`CONFIG_VALUE`), all reported at once. Only the selected
    /// binding's parameters are checked, because only they reach the machine.
    pub fn check(&self, file: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut bad = |key: &str, message: String, hint: &str| {
            out.push(value_error(file, key, message, hint))
        };

        let p = &self.name_prefix;
        if p.is_empty()
            || p.chars().count() > 20
            || !p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            bad(
                "name-prefix",
                format!("name-prefix `{p}` must be 1 to 20 characters of A-Z, a-z, 0-9 and `-`"),
                "the prefix starts every state machine, role and schedule name, whose AWS limits leave 20 characters for it",
            );
        }

        let http_binding = self.binding.kind == BindingKind::Http;
        match self.binding.kind {
            BindingKind::Http => {
                let h = &self.binding.http;
                if !h.api_base_url.starts_with("https://")
                    || h.api_base_url.len() <= "https://".len()
                {
                    bad(
                        "binding.http.api-base-url",
                        format!("api-base-url `{}` is not an https:// URL", h.api_base_url),
                        "Step Functions HTTP Tasks only call HTTPS endpoints; put TLS in front of TPF's action API",
                    );
                }
                if !is_connection_arn(&h.connection_arn) {
                    bad(
                        "binding.http.connection-arn",
                        format!("connection-arn `{}` is not an EventBridge connection ARN", h.connection_arn),
                        "expected arn:<partition>:events:<region>:<12-digit account>:connection/<name>/<id>",
                    );
                }
            }
            BindingKind::Lambda => {
                let f = &self.binding.lambda.function_arn;
                if !is_function_arn(f) {
                    bad(
                        "binding.lambda.function-arn",
                        format!("function-arn `{f}` is not a Lambda function ARN"),
                        "expected arn:<partition>:lambda:<region>:<12-digit account>:function:<name>[:<alias>]",
                    );
                }
            }
            BindingKind::Queue => {
                let q = &self.binding.queue.queue_url;
                if !is_queue_url(q) {
                    bad(
                        "binding.queue.queue-url",
                        format!("queue-url `{q}` is not an SQS queue URL"),
                        "expected https://sqs.<region>.amazonaws.com/<12-digit account>/<queue>, or an http://localhost \
                         or http://127.0.0.1 URL for a local emulator",
                    );
                }
            }
        }

        if let Some(a) = &self.aws.account_id {
            if !is_digits(a, 12) {
                bad(
                    "aws.account-id",
                    format!("account-id `{a}` is not 12 digits"),
                    "AWS account ids are exactly 12 digits",
                );
            }
        }
        for (key, v) in [
            ("aws.partition", &self.aws.partition),
            ("aws.region", &self.aws.region),
        ] {
            if let Some(v) = v {
                if v.is_empty()
                    || !v
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                {
                    bad(
                        key,
                        format!("`{v}` is not a valid value"),
                        "use lowercase letters, digits and `-` (e.g. aws, us-east-1)",
                    );
                }
            }
        }

        let w = &self.wakeup;
        let t = &w.table_name;
        if t.len() < 3 || t.len() > 255 || !is_name(t) {
            bad(
                "wakeup.table-name",
                format!("table-name `{t}` is not a valid DynamoDB table name"),
                "DynamoDB table names are 3 to 255 characters of A-Z, a-z, 0-9, `_`, `-` and `.`",
            );
        }
        if w.lease_wait_seconds < 1 {
            bad(
                "wakeup.lease-wait-seconds",
                "lease-wait-seconds must be at least 1".into(),
                "a zero wait re-asks TPF in a tight loop while another caller holds the lease",
            );
        }
        if w.recheck_seconds < 1 {
            bad(
                "wakeup.recheck-seconds",
                "recheck-seconds must be at least 1".into(),
                "a zero wait re-asks TPF in a tight loop and burns history events",
            );
        }
        if w.late_recheck_seconds < 60 {
            bad(
                "wakeup.late-recheck-seconds",
                "late-recheck-seconds must be at least 60".into(),
                "it bounds how often a driver re-asks TPF about an execution parked past its deadline",
            );
        }

        for (key, v) in [
            (
                "timeouts.action-call-seconds",
                self.timeouts.action_call_seconds,
            ),
            (
                "timeouts.sweep-call-seconds",
                self.timeouts.sweep_call_seconds,
            ),
        ] {
            if v < 1 {
                bad(
                    key,
                    format!("{key} is {v}; it must be at least 1"),
                    "Step Functions TimeoutSeconds must be a positive integer",
                );
            } else if http_binding && v > 60 {
                bad(
                    key,
                    format!("{key} is {v}, but HTTP Tasks time out after at most 60 seconds"),
                    "Step Functions caps an HTTP Task at 60 s; lower the timeout or use the lambda or queue binding",
                );
            }
        }

        let r = &self.transport_retry;
        if r.max_attempts > 20 {
            bad(
                "transport-retry.max-attempts",
                format!("max-attempts is {}; at most 20 are allowed", r.max_attempts),
                "transport retries only cover network failures (TPF owns business retries); more attempts only delay the failure",
            );
        }
        if !(r.backoff_rate.is_finite() && r.backoff_rate >= 1.0) {
            bad(
                "transport-retry.backoff-rate",
                format!(
                    "backoff-rate is {}; it must be at least 1.0",
                    r.backoff_rate
                ),
                "Step Functions requires BackoffRate >= 1.0",
            );
        }
        if r.interval_seconds < 1 {
            bad(
                "transport-retry.interval-seconds",
                "interval-seconds must be at least 1".into(),
                "Step Functions requires IntervalSeconds >= 1",
            );
        }
        if r.max_delay_seconds < 1 || r.max_delay_seconds < r.interval_seconds {
            bad(
                "transport-retry.max-delay-seconds",
                format!("max-delay-seconds is {}; it must be at least 1 and at least interval-seconds ({})", r.max_delay_seconds, r.interval_seconds),
                "MaxDelaySeconds caps the backoff; below the first interval it would cap every retry",
            );
        }

        let budget = self.history.event_budget;
        if !(1000..=24_000).contains(&budget) {
            bad(
                "history.event-budget",
                format!("event-budget is {budget}; it must be between 1000 and 24000"),
                "Step Functions fails an execution at 25,000 history events; keep headroom for redrives, and enough budget for real work",
            );
        }

        let s = &self.sweeper;
        if !(1..=1000).contains(&s.limit) {
            bad(
                "sweeper.limit",
                format!("limit is {}; it must be between 1 and 1000", s.limit),
                "sweep-once handles at most `limit` executions per call; 0 does nothing",
            );
        }
        if !(1..=40).contains(&s.max_concurrency) {
            bad(
                "sweeper.max-concurrency",
                format!("max-concurrency is {}; it must be between 1 and 40", s.max_concurrency),
                "the sweeper's Map state runs this many calls at once; Step Functions inline Map concurrency is best kept at 40 or less",
            );
        }
        let sched = s.schedule.trim();
        let wrapped = |p: &str| {
            sched
                .strip_prefix(p)
                .and_then(|r| r.strip_suffix(')'))
                .is_some_and(|inner| !inner.trim().is_empty())
        };
        if !(wrapped("rate(") || wrapped("cron(")) {
            bad(
                "sweeper.schedule",
                format!(
                    "schedule `{}` is neither rate(...) nor cron(...)",
                    s.schedule
                ),
                "EventBridge Scheduler takes e.g. `rate(1 minute)` or `cron(0/5 * * * ? *)`",
            );
        }

        let l = &self.logging;
        match (&l.log_group_arn, l.level) {
            (None, LogLevel::Off) => {}
            (None, _) => bad(
                "logging.log-group-arn",
                "log-group-arn is required when logging.level is not OFF".into(),
                "set the CloudWatch Logs log group ARN (ending in `:*`) or set level = \"OFF\"",
            ),
            (Some(arn), _) => {
                if arn_resource(arn, "logs").is_none() || !arn.ends_with(":*") {
                    bad(
                        "logging.log-group-arn",
                        format!("log-group-arn `{arn}` is not a log group ARN ending in `:*`"),
                        "Step Functions wants arn:<partition>:logs:<region>:<account>:log-group:<name>:*",
                    );
                }
            }
        }

        if self.tags.len() > MAX_USER_TAGS {
            bad(
                "tags",
                format!(
                    "{} tags; at most {MAX_USER_TAGS} user tags are allowed",
                    self.tags.len()
                ),
                "AWS allows 50 tags per resource and the compiler adds its own identity tags",
            );
        }
        for (k, v) in &self.tags {
            let key = format!("tags.{k}");
            let lower = k.to_ascii_lowercase();
            if k.is_empty() || k.chars().count() > 128 {
                bad(
                    &key,
                    format!("tag key `{k}` must be 1 to 128 characters"),
                    "AWS tag keys are 1 to 128 characters",
                );
            }
            if v.chars().count() > 256 {
                bad(
                    &key,
                    format!("value of tag `{k}` is longer than 256 characters"),
                    "AWS tag values are at most 256 characters",
                );
            }
            if let Some(prefix) = RESERVED_TAG_PREFIXES
                .iter()
                .find(|p| lower.starts_with(**p))
            {
                bad(
                    &key,
                    format!("tag key `{k}` uses the reserved prefix `{prefix}`"),
                    "`aws:` belongs to AWS and `tpf-sfn:` to the identity tags the compiler writes; pick another key",
                );
            }
        }
        out
    }

    /// The default configuration as commented TOML: every key, its default, what it does and
    /// why. Parses back to [`DriverConfig::default`].
    pub fn annotated_default() -> String {
        let d = DriverConfig::default();
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        format!(
            r#"# tpf-sfn driver configuration. Every key is optional; the values below are the defaults.

# Prefix of every resource name tpf-sfn creates (state machines, roles, schedules).
# 1 to 20 characters of A-Z, a-z, 0-9 and `-`, so the longest generated names stay within AWS limits.
name-prefix = {name_prefix}

[binding]
# How action Task states reach TPF's action API: "http", "lambda" or "queue".
# Only the table of the selected kind is used.
kind = {kind}

[binding.http]
# Base URL of TPF's action API. Must be https://: Step Functions HTTP Tasks refuse plain HTTP.
api-base-url = {api}
# EventBridge connection holding the action API's credentials; HTTP Tasks authenticate through it.
connection-arn = {conn}

[binding.lambda]
# Function that serves TPF's actions (arn:<partition>:lambda:<region>:<account>:function:<name>).
function-arn = {func}

[binding.queue]
# SQS queue a relay reads action requests from (http://localhost URLs allowed for emulators).
queue-url = {queue}

[aws]
# Scope of the ARNs in generated IAM policies. Unset values become `*`, still scoped by name.
# partition = "aws"
# region = "us-east-1"
# account-id = "123456789012"

[wakeup]
# Adapter-owned DynamoDB table for task tokens and the live-driver pointer.
table-name = {table}
# Seconds to wait when TPF reports the execution leased by another caller (TPF `lease-ms`).
lease-wait-seconds = {lease}
# Seconds to wait before re-asking TPF when a wakeup could not be registered.
recheck-seconds = {recheck}
# Seconds between re-asks while TPF keeps an execution parked after its await deadline passed.
late-recheck-seconds = {late}

[timeouts]
# TimeoutSeconds of one action call. HTTP Tasks are capped at 60 s by Step Functions.
action-call-seconds = {action}
# TimeoutSeconds of one sweep-once call.
sweep-call-seconds = {sweep}

[transport-retry]
# Retries of the *transport* of an action call (network, throttling). TPF owns business retries,
# so these stay short: first retry after interval-seconds, growing by backoff-rate, capped at
# max-delay-seconds, at most max-attempts (<= 20).
interval-seconds = {interval}
max-attempts = {attempts}
backoff-rate = {rate:?}
max-delay-seconds = {max_delay}

[history]
# Most history events one driver generation may emit before it rolls over to a fresh execution.
# Step Functions fails an execution at 25,000; the default leaves room for console redrives.
event-budget = {budget}

[sweeper]
# EventBridge Scheduler expression that starts the sweeper (rate(...) or cron(...)).
schedule = {schedule}
# `limit` passed to sweep-once: most due executions one sweep picks up (1 to 1000).
limit = {limit}
# Most due executions the sweeper handles concurrently (1 to 40).
max-concurrency = {conc}

[logging]
# Step Functions log level: "ALL", "ERROR", "FATAL" or "OFF".
level = {level}
# Whether logs include execution input and output (may contain business data).
include-execution-data = {ied}
# CloudWatch Logs log group ARN ending in `:*`; required unless level = "OFF".
# log-group-arn = "arn:aws:logs:us-east-1:123456789012:log-group:tpf-sfn:*"

[tracing]
# X-Ray tracing on the machines.
enabled = {tracing}

[tags]
# Extra tags for every machine, next to the identity tags the compiler always adds.
# At most 40; keys must not start with `aws:` or `tpf-sfn:`.
# team = "payments"
"#,
            name_prefix = q(&d.name_prefix),
            kind = q(d.binding.kind.as_str()),
            api = q(&d.binding.http.api_base_url),
            conn = q(&d.binding.http.connection_arn),
            func = q(&d.binding.lambda.function_arn),
            queue = q(&d.binding.queue.queue_url),
            table = q(&d.wakeup.table_name),
            lease = d.wakeup.lease_wait_seconds,
            recheck = d.wakeup.recheck_seconds,
            late = d.wakeup.late_recheck_seconds,
            action = d.timeouts.action_call_seconds,
            sweep = d.timeouts.sweep_call_seconds,
            interval = d.transport_retry.interval_seconds,
            attempts = d.transport_retry.max_attempts,
            rate = d.transport_retry.backoff_rate,
            max_delay = d.transport_retry.max_delay_seconds,
            budget = d.history.event_budget,
            schedule = q(&d.sweeper.schedule),
            limit = d.sweeper.limit,
            conc = d.sweeper.max_concurrency,
            level = q(log_level_str(d.logging.level)),
            ied = d.logging.include_execution_data,
            tracing = d.tracing.enabled,
        )
    }
}

fn log_level_str(level: LogLevel) -> &'static str {
    match level {
        LogLevel::All => "ALL",
        LogLevel::Error => "ERROR",
        LogLevel::Fatal => "FATAL",
        LogLevel::Off => "OFF",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotated_default_parses_back_to_default() {
        let text = DriverConfig::annotated_default();
        assert_eq!(
            DriverConfig::from_toml("default.toml", &text),
            Ok(DriverConfig::default())
        );
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
    fn arn_and_url_shapes() {
        assert!(is_connection_arn(
            "arn:aws:events:eu-west-1:123456789012:connection/tpf/abc-1"
        ));
        assert!(!is_connection_arn(
            "arn:aws:events:eu-west-1:12345:connection/tpf/abc"
        ));
        assert!(is_function_arn(
            "arn:aws:lambda:us-east-1:123456789012:function:f:live"
        ));
        assert!(!is_function_arn(
            "arn:aws:lambda:us-east-1:123456789012:layer:f"
        ));
        assert!(is_queue_url(
            "https://sqs.eu-west-1.amazonaws.com/123456789012/q"
        ));
        assert!(is_queue_url("http://localhost:4566/000000000000/q"));
        assert!(!is_queue_url(
            "http://sqs.eu-west-1.amazonaws.com/123456789012/q"
        ));
        assert_eq!(line_col("a\nbé c", 6), (2, 4));
    }
}
