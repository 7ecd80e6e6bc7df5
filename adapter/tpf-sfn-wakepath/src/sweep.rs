//! The Lambda durable functions backend's sweeper: a scheduled function, one per release, that
//! does what the Step Functions sweeper machine does in its states. It calls TPF's `sweep-once`
//! for its release (which applies await timeouts and lists the due executions) and makes sure
//! each due execution of this release has exactly one live, awake driver: it completes the
//! callback of a parked driver whose wakeup was lost, and starts a recovery lineage where no
//! driver runs. The choice per execution is `tpf_sfn_wakeup::sweeper::decide`, the one the
//! mapping proof runs; this module reads what it needs and does what it chose.
//!
//! A failure on one due execution does not stop the others: the report lists it, and the next
//! scheduled sweep tries again (every action is idempotent: the recovery lineage is named from
//! TPF's record version, and a closed callback counts as done).

use aws_sdk_lambda::types::ExecutionStatus;
use tpf_sfn_wakeup::bridge::{woken_by, BridgeAction};
use tpf_sfn_wakeup::sweeper::{decide, pinned_here, SweepAction};
use tpf_wire::action::{DueExecution, SweepOnceRequest, SweepOnceResponse};
use tpf_wire::wakeup::{self, attr};
use tpf_wire::Identity;

use crate::aws::errors;
use crate::bridge::durable::{self, Acted};
use crate::bridge::{read_row, read_token, row_text};
use crate::error::Error;
use crate::relay::envelope::sweep_once_path;
use crate::relay::http::{ActionHost, Reply};

/// `SWEEP_…`: the codes of a failed sweep.
pub const SCOPE: &str = "SWEEP";

/// What one sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Due executions TPF listed.
    pub due: usize,
    /// Pinned to another release: that release's sweeper handles them.
    pub other_release: usize,
    /// A live driver runs and is awake, or wakes on its own timer.
    pub live: usize,
    /// Parked drivers whose lost wakeup this sweep sent.
    pub woken: usize,
    /// Recovery lineages started, by name.
    pub recovered: Vec<String>,
    /// Wakes or starts an earlier sweep (or the bridge) already made.
    pub already_done: usize,
    /// Starts Lambda refused for good.
    pub refused: Vec<String>,
    /// Due executions this sweep could not see to, with why: the next sweep tries again.
    pub failed: Vec<String>,
}

/// The sweep-once call over the Action API (`POST {base}/tpf/actions/v1/sweep-once`).
pub async fn sweep_once_over<H: ActionHost>(
    host: &H,
    request: &SweepOnceRequest,
) -> Result<SweepOnceResponse, Error> {
    let body = serde_json::to_string(request).map_err(|e| {
        Error::new(
            "SWEEP_ACTION",
            format!("the request could not be written: {e}"),
        )
    })?;
    let reply = host.post(&sweep_once_path(), &body).await.map_err(|e| {
        Error::new("SWEEP_ACTION", format!("sweep-once did not reach TPF: {}", e.0))
            .with_hint("check the release's apiBaseUrl and that TPF's action host is up; the next scheduled sweep tries again")
    })?;
    from_reply(&reply)
}

/// TPF's answer to sweep-once over HTTP.
pub fn from_reply(reply: &Reply) -> Result<SweepOnceResponse, Error> {
    if !(200..=299).contains(&reply.status) {
        return Err(Error::new(
            "SWEEP_ACTION",
            format!("sweep-once answered HTTP {}: {}", reply.status, reply.body),
        )
        .with_hint("TPF refused the sweep; its answer says why"));
    }
    answer(&reply.body)
}

/// A sweep-once outcome's JSON (the HTTP body, or an action function's payload).
pub fn answer(text: &str) -> Result<SweepOnceResponse, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            "SWEEP_ACTION",
            format!("sweep-once answered with something that is not its outcome: {e}"),
        )
        .with_hint("the action host must speak TPF Action API v1")
    })
}

/// One release's sweeper: its identity, the function version its drivers run on, and the
/// clients it acts through.
pub struct DurableSweeper {
    ddb: aws_sdk_dynamodb::Client,
    lambda: aws_sdk_lambda::Client,
    wakeup_table: String,
    release: Identity,
    /// The release's qualified function ARN (`...:function:<name>:<version>`).
    function: String,
}

impl DurableSweeper {
    pub fn new(
        ddb: aws_sdk_dynamodb::Client,
        lambda: aws_sdk_lambda::Client,
        wakeup_table: impl Into<String>,
        release: Identity,
        function: impl Into<String>,
    ) -> Self {
        Self {
            ddb,
            lambda,
            wakeup_table: wakeup_table.into(),
            release,
            function: function.into(),
        }
    }

    /// This release's sweep-once request. `key` names the sweep (the schedule's invocation),
    /// so a retried invocation is the same sweep to TPF.
    pub fn request(&self, limit: usize, key: &str) -> SweepOnceRequest {
        SweepOnceRequest {
            limit,
            pipeline_id: Some(self.release.pipeline_id.clone()),
            contract_version: Some(self.release.contract_version.clone()),
            release_version: Some(self.release.release_version.clone()),
            idempotency_key: Some(key.to_owned()),
        }
    }

    /// Sees to every due execution TPF listed.
    pub async fn act_on(&self, due: &[DueExecution]) -> SweepReport {
        let mut report = SweepReport {
            due: due.len(),
            ..SweepReport::default()
        };
        for d in due {
            if let Err(e) = self.ensure(d, &mut report).await {
                report.failed.push(format!(
                    "{}/{}: {}",
                    d.tenant_id,
                    d.execution_id,
                    e.report()
                ));
            }
        }
        report
    }

    async fn ensure(&self, due: &DueExecution, report: &mut SweepReport) -> Result<(), Error> {
        // Release pinning first: another release's execution costs no reads.
        let pointer = if pinned_here(&self.release, due) {
            let row = read_row(
                &self.ddb,
                &self.wakeup_table,
                SCOPE,
                &due.tenant_id,
                &due.execution_id,
                wakeup::DRIVER_ROW,
            )
            .await?;
            row_text(row.as_ref(), attr::EXECUTION_ARN)
        } else {
            None
        };
        let running = match &pointer {
            Some(arn) => self.running(arn).await?,
            None => false,
        };
        let token = if running {
            read_token(
                &self.ddb,
                &self.wakeup_table,
                SCOPE,
                &due.tenant_id,
                &due.execution_id,
            )
            .await?
        } else {
            None
        };
        let acted = match decide(
            &self.release,
            due,
            pointer.as_deref(),
            running,
            token.as_ref(),
        ) {
            SweepAction::OtherRelease => {
                report.other_release += 1;
                return Ok(());
            }
            SweepAction::Live => {
                report.live += 1;
                return Ok(());
            }
            SweepAction::Wake { callback_id } => {
                let acted =
                    durable::wake(&self.lambda, SCOPE, &callback_id, &woken_by("sweeper")).await?;
                if acted == Acted::Done {
                    report.woken += 1;
                }
                acted
            }
            SweepAction::Recover { lineage } => {
                let input = BridgeAction::driver_input(&due.tenant_id, &due.execution_id, &lineage);
                let acted =
                    durable::start(&self.lambda, SCOPE, &self.function, &lineage, &input).await?;
                if acted == Acted::Done {
                    report.recovered.push(lineage);
                }
                acted
            }
        };
        match acted {
            Acted::Done => {}
            Acted::AlreadyDone => report.already_done += 1,
            Acted::Refused(why) => report.refused.push(why),
        }
        Ok(())
    }

    /// Whether the durable execution runs (a missing one does not).
    async fn running(&self, arn: &str) -> Result<bool, Error> {
        match self
            .lambda
            .get_durable_execution()
            .durable_execution_arn(arn)
            .send()
            .await
        {
            Ok(out) => Ok(out.status() == &ExecutionStatus::Running),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_resource_not_found_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(errors::from_sdk(SCOPE, "GetDurableExecution", e, |_| None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status,
            body: body.into(),
        }
    }

    #[test]
    fn a_sweep_once_outcome_is_read_and_anything_else_is_a_coded_error() {
        let ok = reply(
            200,
            r#"{"timedOutAwaits":[],"due":[{"tenantId":"t","executionId":"e","pipelineId":"p",
                "contractVersion":"c","releaseVersion":"r1","status":"RUNNING","version":4,
                "nextDueAt":null}]}"#,
        );
        let answer = from_reply(&ok).unwrap();
        assert_eq!(answer.due.len(), 1);
        assert_eq!(answer.due[0].version, 4);

        for bad in [reply(500, "down"), reply(409, "{}"), reply(200, "<html>")] {
            let e = from_reply(&bad).unwrap_err();
            assert_eq!(e.code(), "SWEEP_ACTION", "{}", e.report());
            assert!(e.hint().is_some());
        }
    }

    /// A sweeper whose AWS clients point at `endpoint`, with static credentials and no retries.
    fn sweeper(endpoint: &str) -> DurableSweeper {
        use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
        let creds = Credentials::new("testing", "testing", None, None, "static");
        let ddb = aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(endpoint)
            .region(Region::new("us-east-1"))
            .credentials_provider(creds.clone())
            .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
            .build();
        let lambda = aws_sdk_lambda::Config::builder()
            .behavior_version(aws_sdk_lambda::config::BehaviorVersion::latest())
            .endpoint_url(endpoint)
            .region(aws_sdk_lambda::config::Region::new("us-east-1"))
            .credentials_provider(creds)
            .retry_config(aws_sdk_lambda::config::retry::RetryConfig::disabled())
            .build();
        DurableSweeper::new(
            aws_sdk_dynamodb::Client::from_conf(ddb),
            aws_sdk_lambda::Client::from_conf(lambda),
            "tpf_sfn_wakeup",
            Identity {
                pipeline_id: "p".into(),
                contract_version: "c".into(),
                release_version: "r1".into(),
            },
            "arn:aws:lambda:us-east-1:000000000000:function:f:1",
        )
    }

    fn due(execution_id: &str, release_version: &str) -> DueExecution {
        DueExecution {
            tenant_id: "t".into(),
            execution_id: execution_id.into(),
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: release_version.into(),
            status: tpf_wire::records::ExecutionStatus::Running,
            version: 3,
            next_due_at: None,
        }
    }

    #[test]
    fn the_request_names_this_release_and_the_sweep() {
        let r = sweeper("http://127.0.0.1:9").request(100, "sweep-1");
        assert_eq!(r.limit, 100);
        assert_eq!(r.release_version.as_deref(), Some("r1"));
        assert_eq!(r.idempotency_key.as_deref(), Some("sweep-1"));
    }

    /// The wakeup table cannot be read (nothing listens on the port): that execution is
    /// reported with its coded error, and the next one is still seen to; another release's
    /// execution costs no read at all.
    #[tokio::test]
    async fn one_execution_that_cannot_be_seen_to_does_not_stop_the_others() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let s = sweeper(&format!("http://127.0.0.1:{port}"));
        let report = s
            .act_on(&[due("e1", "r1"), due("e2", "r0"), due("e3", "r1")])
            .await;
        assert_eq!(report.due, 3);
        assert_eq!(report.other_release, 1);
        assert_eq!(report.failed.len(), 2, "{report:?}");
        assert!(
            report.failed[0].starts_with("t/e1: error[SWEEP_"),
            "{report:?}"
        );
        assert!(
            report.failed[1].starts_with("t/e3: error[SWEEP_"),
            "{report:?}"
        );
        assert_eq!(report.woken + report.already_done + report.live, 0);
        assert!(report.recovered.is_empty());
    }
}
