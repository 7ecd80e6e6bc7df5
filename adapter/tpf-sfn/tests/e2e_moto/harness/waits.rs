//! Waiting for the loop: until a driver parks, resumes or ends, as seen on moto and in TPF.

use super::*;

impl Loop {
    /// Waits until TPF parked `id` and its driver `arn` entered the await; returns how many
    /// states the driver had entered by then.
    pub async fn wait_parked(&self, arn: &str, id: &str) -> usize {
        let parked = poll(300, || async {
            let entered = entered_states(&self.sfn, arn).await;
            (self.record(id).await["status"] == "WAITING_EXTERNAL"
                && entered.last().map(String::as_str) == Some(AWAIT))
            .then_some(entered.len())
        })
        .await;
        parked.unwrap_or_else(|| panic!("{arn} never parked\n{}", self.logs()))
    }

    /// Waits until the driver `arn` and TPF's record of `id` both end in `status`.
    pub async fn wait_ended(&self, arn: &str, id: &str, status: ExecutionStatus) {
        self.wait_ended_completing(arn, id, status, false).await
    }

    /// `wait_ended`; with `complete_parks` it also completes every interaction of `id` once the
    /// driver has parked on it, as the matrix's "complete every park" actor does (its
    /// completions come minutes after the park). Completing earlier would race the driver's own
    /// calls, and under duplicate delivery TPF could legitimately finish before the driver
    /// parks: a different, equally correct path.
    pub async fn wait_ended_completing(
        &self,
        arn: &str,
        id: &str,
        status: ExecutionStatus,
        complete_parks: bool,
    ) {
        let tpf = status.as_str().to_owned();
        let ended = poll(300, || async {
            let parked = || async {
                entered_states(&self.sfn, arn)
                    .await
                    .last()
                    .map(String::as_str)
                    == Some(AWAIT)
            };
            if complete_parks && parked().await {
                if let Some(interaction) = self.pending(id).await {
                    self.complete(&interaction).await;
                }
            }
            let d = self
                .sfn
                .describe_execution()
                .execution_arn(arn)
                .send()
                .await
                .ok()?;
            (d.status() == &status && self.record(id).await["status"] == tpf.as_str()).then_some(())
        })
        .await;
        assert!(
            ended.is_some(),
            "{arn} never {tpf} in both\n{}",
            self.logs()
        );
    }

    /// Waits until the driver `arn` has entered more than `after` states (it resumed).
    pub async fn wait_resumed(&self, arn: &str, after: usize) {
        let resumed = poll(300, || async {
            (entered_states(&self.sfn, arn).await.len() > after).then_some(())
        })
        .await;
        assert!(resumed.is_some(), "{arn} never resumed\n{}", self.logs());
    }
}

/// Names of the states the driver entered, in order; empty until the bridge has started it.
pub async fn entered_states(sfn: &aws_sdk_sfn::Client, arn: &str) -> Vec<String> {
    driver_path(sfn, arn).await.states
}
