//! `tpf-sfn init`'s file: the default configuration serialised from [`DriverConfig::default`],
//! with every key explained. The values come from the defaults themselves; only the
//! explanations are written here, and a test keeps the two tables in step with the fields.

use super::DriverConfig;

/// Comment lines above each section header, by section.
const SECTIONS: &[(&str, &str)] = &[
    ("binding", "How the driver reaches TPF: its action gateway."),
    ("binding.gateway", "kind = \"gateway\": the driver follows TPF's own coordinator protocol against TPF's action gateway\n(SUBMIT, SWEEP + STATUS polls, REGISTER_CALLBACK parks, RESULT). No sweeper machine: the driver sweeps itself."),
    ("aws", "Scope of the ARNs in generated IAM policies. Unset values become `*`, still scoped by name."),
    ("timeouts", ""),
    ("history", ""),
    ("sweeper", "Who calls TPF's SWEEP (await timeouts, due work, item continuations). TPF's sweep is global, so one\nscheduled caller does for every execution what every driver's poll otherwise does."),
    ("logging", ""),
    ("tracing", ""),
    ("tags", "Extra tags for every machine, next to the identity tags the compiler always adds.\nAt most 40; keys must not start with `aws:` or `tpf-sfn:`."),
];

/// Comment lines above each key, by dotted key.
const KEYS: &[(&str, &str)] = &[
    ("name-prefix", "Prefix of every resource name tpf-sfn creates (state machines, roles, schedules).\n1 to 20 characters of A-Z, a-z, 0-9 and `-`, so the longest generated names stay within AWS limits."),
    ("binding.kind", "\"gateway\": TPF's action gateway, the protocol TPF serves. Action API v1's \"http\", \"lambda\" and \"queue\"\nare retired (ACTION_API_V1_RETIRED)."),
    ("binding.gateway.function-arn", "TPF's action gateway function, qualified by a NUMBERED version\n(arn:<partition>:lambda:<region>:<account>:function:<name>:<version>); an alias or the unqualified name is refused.\nThe default is a placeholder: set it before deploying."),
    ("binding.gateway.transport", "\"lambda\": Step Functions invokes the gateway itself; \"queue\": it sends each request to queue-url and a relay\ninvokes the gateway (for a local emulator that cannot run Lambda functions)."),
    ("binding.gateway.queue-url", "SQS queue the relay reads gateway requests from (transport = \"queue\"; http://localhost URLs allowed for emulators).\nThe default is a placeholder: set it before deploying."),
    ("binding.gateway.starter-function-arn", "Starter function the driver hands over through: it starts the next generation under TPF's execution name\n(the wake-path stack's `GatewayStarterArn` output). The default is a placeholder: set it before deploying."),
    ("binding.gateway.await-timeout-seconds", "Await timeout of a contract await that carries none (August 2026's contracts); the driver parks at most\nthe longest await timeout + 1 s, then sweeps so TPF applies it."),
    ("timeouts.action-call-seconds", "TimeoutSeconds of one gateway call; on Lambda durable functions the driver function's timeout is 30 s more."),
    ("history.event-budget", "Most history events one driver generation may emit before it rolls over to a fresh execution.\nStep Functions fails an execution at 25,000; the default leaves room for console redrives."),
    ("sweeper.mode", "\"driver\": every driver sweeps before every STATUS it polls, as TPF's own driver does. \"schedule\": the wake-path\nstack sweeps on `schedule`, and a driver sweeps only at its start, while TPF's record waits to retry and after\na park (one gateway call fewer per poll, one transition fewer on Step Functions; docs/benchmarks.md has the figures)."),
    ("sweeper.schedule", "EventBridge Scheduler expression of the scheduled sweep (mode = \"schedule\": rate(...) only, e.g. rate(1 minute))."),
    ("logging.level", "Step Functions log level: \"ALL\", \"ERROR\", \"FATAL\" or \"OFF\"."),
    ("logging.include-execution-data", "Whether logs include execution input and output (may contain business data)."),
    ("tracing.enabled", "X-Ray tracing on the machines."),
];

/// Commented-out examples for keys without a default, by section.
const EXAMPLES: &[(&str, &str)] = &[
    ("aws", "# partition = \"aws\"\n# region = \"us-east-1\"\n# account-id = \"123456789012\""),
    ("logging", "# CloudWatch Logs log group ARN ending in `:*`; required unless level = \"OFF\".\n# log-group-arn = \"arn:aws:logs:us-east-1:123456789012:log-group:tpf-sfn:*\""),
    ("tags", "# team = \"payments\""),
];

fn lookup<'a>(table: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn comment(out: &mut String, text: &str) {
    for line in text.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
}

impl DriverConfig {
    /// What `tpf-sfn init` writes: the defaults, every key commented with what it does and why.
    /// Parses back to [`DriverConfig::default`], the same configuration as no file at all.
    pub fn annotated_default() -> String {
        // Serialising plain structs of strings, numbers and maps cannot fail.
        let text = toml::to_string(&DriverConfig::default()).unwrap_or_default();
        let mut out = String::from(
            "# tpf-sfn driver configuration. Every key is optional; the values below are the defaults,\n\
             # the configuration tpf-sfn compiles without a file.\n",
        );
        let mut section = String::new();
        let flush_examples = |out: &mut String, section: &str| {
            if let Some(example) = lookup(EXAMPLES, section) {
                out.push_str(example);
                out.push('\n');
            }
        };
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                flush_examples(&mut out, &section);
                section = name.to_string();
                out.push('\n');
                out.push_str(line);
                out.push('\n');
                comment(&mut out, lookup(SECTIONS, &section).unwrap_or_default());
                continue;
            }
            let key = line.split('=').next().unwrap_or_default().trim();
            let dotted = if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            };
            if section.is_empty() {
                out.push('\n');
            }
            comment(&mut out, lookup(KEYS, &dotted).unwrap_or_default());
            out.push_str(line);
            out.push('\n');
        }
        flush_examples(&mut out, &section);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every serialised key and section is explained, and nothing explained is gone.
    #[test]
    fn every_key_is_documented_and_no_documentation_is_stale() {
        let text = toml::to_string(&DriverConfig::default()).unwrap();
        let mut section = String::new();
        let mut seen_keys = Vec::new();
        let mut seen_sections = Vec::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.to_string();
                seen_sections.push(section.clone());
                continue;
            }
            let key = line.split('=').next().unwrap().trim();
            seen_keys.push(if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            });
        }
        for k in &seen_keys {
            assert!(lookup(KEYS, k).is_some(), "undocumented key {k}");
        }
        for (k, _) in KEYS {
            assert!(
                seen_keys.iter().any(|s| s == k),
                "documented key {k} is gone"
            );
        }
        for s in &seen_sections {
            assert!(lookup(SECTIONS, s).is_some(), "undocumented section {s}");
        }
        for (s, _) in SECTIONS.iter().chain(EXAMPLES) {
            assert!(seen_sections.iter().any(|x| x == s), "section {s} is gone");
        }
    }
}
