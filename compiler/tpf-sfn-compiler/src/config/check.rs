//! Range and shape checks of a parsed config (`CONFIG_VALUE`), one function per section, all
//! findings reported together.

use super::shape::{
    arn_resource, function_qualifier, is_digits, is_function_arn, is_queue_url, is_version_number,
};
use super::{BindingKind, DriverConfig, GatewayTransport, LogLevel, SweepMode};
use crate::diagnostic::{Diagnostic, Location};

const RESERVED_TAG_PREFIXES: &[&str] = &["aws:", "tpf-sfn:"];
const MAX_USER_TAGS: usize = 40;
const QUEUE_URL_HINT: &str =
    "expected https://sqs.<region>.amazonaws.com/<12-digit account>/<queue>, or an \
     http://localhost or http://127.0.0.1 URL for a local emulator";

/// Reports one finding: dotted key, message, hint.
type Bad<'a> = dyn FnMut(&str, String, &str) + 'a;

fn value_error(
    file: &str,
    key: &str,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Diagnostic {
    Diagnostic::error("CONFIG_VALUE", Location::pointer(file, key), message).with_hint(hint)
}

impl DriverConfig {
    /// Range and shape checks (`CONFIG_VALUE`), all reported at once.
    pub fn check(&self, file: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut bad = |key: &str, message: String, hint: &str| {
            out.push(value_error(file, key, message, hint))
        };
        self.check_name_prefix(&mut bad);
        self.check_gateway(&mut bad);
        self.check_aws(&mut bad);
        self.check_timeouts(&mut bad);
        self.check_history(&mut bad);
        self.check_sweeper(&mut bad);
        self.check_logging(&mut bad);
        self.check_tags(&mut bad);
        out.extend(self.check_gateway_qualifier(file));
        out
    }

    /// `GATEWAY_UNQUALIFIED`: the gateway binding calls TPF's action gateway by a numbered
    /// version only. An alias or the unqualified name can move to other code under a deployed
    /// driver (TPF's own host has that gap); a version cannot. Any other malformed ARN is
    /// `CONFIG_VALUE`'s.
    fn check_gateway_qualifier(&self, file: &str) -> Option<Diagnostic> {
        if self.binding.kind != BindingKind::Gateway {
            return None;
        }
        let arn = &self.binding.gateway.function_arn;
        let qualifier = function_qualifier(arn)?;
        if qualifier.is_some_and(is_version_number) {
            return None;
        }
        let what = match qualifier {
            None => "is unqualified".to_string(),
            Some(q) => format!("is qualified by `{q}`, which is not a version number"),
        };
        Some(
            Diagnostic::error(
                "GATEWAY_UNQUALIFIED",
                Location::pointer(file, "binding.gateway.function-arn"),
                format!("function-arn `{arn}` {what}: the gateway driver only invokes a numbered version of TPF's action gateway"),
            )
            .with_hint(
                "publish a version of the gateway function (`aws lambda publish-version`) and append its number: \
                 arn:<partition>:lambda:<region>:<account>:function:<name>:<version>",
            ),
        )
    }

    fn check_name_prefix(&self, bad: &mut Bad<'_>) {
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
    }

    fn check_gateway(&self, bad: &mut Bad<'_>) {
        let g = &self.binding.gateway;
        if function_qualifier(&g.function_arn).is_none() {
            bad(
                "binding.gateway.function-arn",
                format!("function-arn `{}` is not a Lambda function ARN", g.function_arn),
                "expected arn:<partition>:lambda:<region>:<12-digit account>:function:<name>:<version>",
            );
        }
        if !is_function_arn(&g.starter_function_arn) {
            bad(
                "binding.gateway.starter-function-arn",
                format!("starter-function-arn `{}` is not a Lambda function ARN", g.starter_function_arn),
                "expected arn:<partition>:lambda:<region>:<12-digit account>:function:<name>[:<qualifier>]: the wake-path \
                 stack's starter function",
            );
        }
        if g.transport == GatewayTransport::Queue && !is_queue_url(&g.queue_url) {
            bad(
                "binding.gateway.queue-url",
                format!("queue-url `{}` is not an SQS queue URL", g.queue_url),
                QUEUE_URL_HINT,
            );
        }
        // A Task's TimeoutSeconds takes at most 99,999,999; a year is a Standard execution's life.
        if !(1..=365 * 86_400).contains(&g.await_timeout_seconds) {
            bad(
                "binding.gateway.await-timeout-seconds",
                format!("await-timeout-seconds is {}; it must be between 1 and 31536000 (a year)", g.await_timeout_seconds),
                "TPF requires a positive timeout on every await, and a Standard execution lives at most a year",
            );
        }
    }

    fn check_aws(&self, bad: &mut Bad<'_>) {
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
    }

    fn check_timeouts(&self, bad: &mut Bad<'_>) {
        let (key, v) = (
            "timeouts.action-call-seconds",
            self.timeouts.action_call_seconds,
        );
        if v < 1 {
            bad(
                key,
                format!("{key} is {v}; it must be at least 1"),
                "Step Functions TimeoutSeconds must be a positive integer",
            );
        }
    }

    fn check_history(&self, bad: &mut Bad<'_>) {
        let budget = self.history.event_budget;
        if !(1000..=24_000).contains(&budget) {
            bad(
            "history.event-budget",
            format!("event-budget is {budget}; it must be between 1000 and 24000"),
            "Step Functions fails an execution at 25,000 history events; keep headroom for redrives, and enough budget for real work",
        );
        }
    }

    fn check_sweeper(&self, bad: &mut Bad<'_>) {
        let s = &self.sweeper;
        let sched = s.schedule.trim();
        let wrapped = |p: &str| {
            sched
                .strip_prefix(p)
                .and_then(|r| r.strip_suffix(')'))
                .is_some_and(|inner| !inner.trim().is_empty())
        };
        if s.mode == SweepMode::Schedule && super::rate_period_seconds(sched).is_none() {
            bad(
                "sweeper.schedule",
                format!(
                    "mode = \"schedule\" needs a rate(...) schedule; `{}` is not one",
                    s.schedule
                ),
                "write the period as EventBridge Scheduler's rate(<n> minute|minutes|hour|hours|day|days), e.g. `rate(1 minute)`: the mapping proof runs the scheduled sweep at that period",
            );
        } else if !(wrapped("rate(") || wrapped("cron(")) {
            bad(
                "sweeper.schedule",
                format!(
                    "schedule `{}` is neither rate(...) nor cron(...)",
                    s.schedule
                ),
                "EventBridge Scheduler takes e.g. `rate(1 minute)` or `cron(0/5 * * * ? *)`",
            );
        }
    }

    fn check_logging(&self, bad: &mut Bad<'_>) {
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
    }

    fn check_tags(&self, bad: &mut Bad<'_>) {
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
    }
}
