//! A release's durable sweeper function: on each scheduled invocation, TPF's sweep-once for the
//! release through the release's binding, then [`tpf_sfn_wakepath::sweep::DurableSweeper`] on the due
//! executions it lists. It reads the driver's spec (identity, binding, wakeup table) from the
//! same variable the driver does, so the two cannot disagree about the release.

use serde_json::{json, Value};
use tpf_sfn_wakepath::sweep::{DurableSweeper, SweepReport};

use crate::config::{ConfigError, Env};
use crate::durable::{call::ActionClient, spec, var};

pub struct Sweeper {
    action: ActionClient,
    durable: DurableSweeper,
    limit: usize,
}

impl Sweeper {
    pub fn new<F: Fn(&str) -> Option<String>>(
        env: &Env<F>,
        config: &aws_config::SdkConfig,
    ) -> Result<Sweeper, ConfigError> {
        let spec = spec(env)?;
        let (function, limit) = env.durable_sweeper()?;
        let lambda = aws_sdk_lambda::Client::new(config);
        let action = ActionClient::new(
            &spec,
            env.action_token(var::ACTION_TOKEN, config)?,
            lambda.clone(),
        )?;
        Ok(Sweeper {
            action,
            durable: DurableSweeper::new(
                aws_sdk_dynamodb::Client::new(config),
                lambda,
                spec.wakeup.table_name,
                spec.identity,
                function,
            ),
            limit,
        })
    }

    /// One sweep named `key`. `Err` when TPF could not be asked, or when a due execution could
    /// not be seen to: the invocation fails so the function's error metric shows it; the next
    /// sweep tries again.
    pub async fn run(&self, key: &str) -> Result<SweepReport, tpf_sfn_wakepath::error::Error> {
        let request = self.durable.request(self.limit, key);
        let answer = self.action.sweep_once(&request).await?;
        let report = self.durable.act_on(&answer.due).await;
        eprintln!(
            "sweeper {key}: {} timed-out awaits, {} due, {} other release, {} live, {} woken, {} recovered, {} already done, {} refused, {} failed",
            answer.timed_out_awaits.len(),
            report.due,
            report.other_release,
            report.live,
            report.woken,
            report.recovered.len(),
            report.already_done,
            report.refused.len(),
            report.failed.len()
        );
        for lineage in &report.recovered {
            eprintln!("sweeper: started recovery {lineage}");
        }
        for r in &report.refused {
            eprintln!("sweeper: start refused for {r}");
        }
        if let Some(first) = report.failed.first() {
            return Err(tpf_sfn_wakepath::error::Error::new(
                "SWEEP_INCOMPLETE",
                format!(
                    "{} of {} due executions were not seen to; the first: {first}",
                    report.failed.len(),
                    report.due
                ),
            )
            .with_hint("the next scheduled sweep tries them again"));
        }
        Ok(report)
    }
}

/// The sweep's name: the schedule's invocation id, or Lambda's request id for a hand-made
/// invocation without one.
pub fn sweep_key(event: &Value, request_id: &str) -> String {
    event
        .get(tpf_sfn_compiler::durable::cloudformation::SWEEP_ID)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty() && !s.starts_with('<'))
        .map_or_else(|| format!("sweep-{request_id}"), str::to_owned)
}

/// What the invocation returns: the report's counts.
pub fn output(report: &SweepReport) -> Value {
    json!({
        "due": report.due,
        "otherRelease": report.other_release,
        "live": report.live,
        "woken": report.woken,
        "recovered": report.recovered,
        "alreadyDone": report.already_done,
        "refused": report.refused,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_names_the_sweep_and_a_bare_invocation_gets_its_request_id() {
        assert_eq!(
            sweep_key(&json!({"sweepId": "c0ffee-1"}), "req-1"),
            "c0ffee-1"
        );
        assert_eq!(sweep_key(&json!({}), "req-1"), "sweep-req-1");
        // An unexpanded context attribute (a test invoke with the template's text) is no name.
        assert_eq!(
            sweep_key(&json!({"sweepId": "<aws.scheduler.execution-id>"}), "req-2"),
            "sweep-req-2"
        );
    }
}
