//! The durable driver function's `sweep-once` call over Action API v1, and its answer read.
//! (The scheduled durable sweeper that acted on it is retired with Action API v1's wake path.)

use tpf_wire::action::{SweepOnceRequest, SweepOnceResponse};

use crate::error::Error;
use crate::relay::envelope::sweep_once_path;
use crate::relay::http::{ActionHost, Reply};

/// `SWEEP_…`: the codes of a failed sweep.
pub const SCOPE: &str = "SWEEP";

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
        .with_hint("the next scheduled sweep tries again")
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
}
