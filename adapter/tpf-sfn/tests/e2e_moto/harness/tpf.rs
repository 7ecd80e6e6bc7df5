//! TPF's side of the loop, over the action host's HTTP API and the `status` command: submit,
//! read the record, complete interactions.

use super::*;

impl Loop {
    /// Submits an order; returns TPF's execution id.
    pub async fn submit(&self, key: &str) -> String {
        submit(self.addr, self.pipeline_id(), key).await
    }

    /// TPF's `ExecutionStatusDto` for `id`.
    pub async fn record(&self, id: &str) -> Value {
        record(self.addr, id).await
    }

    /// The pending interaction of execution `id`, if TPF has one.
    pub async fn pending(&self, id: &str) -> Option<String> {
        pending_interaction(self.addr, id).await
    }

    /// Completes interaction `interaction`; returns the response body.
    pub async fn complete(&self, interaction: &str) -> Value {
        complete_interaction(self.addr, interaction).await
    }

    pub async fn post_admin(&self, path: &str, body: &str) -> Value {
        let r = request(
            self.addr,
            "POST",
            &format!("/tpf/admin/tenants/{TENANT}/{path}"),
            Some(TOKEN),
            Some(body),
        )
        .await;
        assert_eq!(r.status, 200, "{path}: {}", r.raw);
        r.body
    }

    /// TPF's record status straight from DynamoDB, as `tpf-sfn status` reports it.
    pub fn stored_status(&self, id: &str) -> String {
        let o = tpf_sfn()
            .args(["status", "--out", utf8(&self.releases[0].out)])
            .args(["--tenant", TENANT, "--execution", id])
            .args(["--prefix", &self.prefix])
            .args(["--format", "json"])
            .args(["--endpoint-url", &self.endpoint, "--region", "us-east-1"])
            .output()
            .expect("run tpf-sfn status");
        let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        report["record"]["status"].as_str().unwrap_or("").to_owned()
    }
}

/// TPF's `ExecutionStatusDto` for `id`, from the host at `addr`.
pub async fn record(addr: SocketAddr, id: &str) -> Value {
    support::http::execution_record(addr, TOKEN, TENANT, id).await
}

/// Submits an order to the host at `addr`; returns TPF's execution id.
pub async fn submit(addr: SocketAddr, pipeline_id: &str, key: &str) -> String {
    let r = support::http::submit(addr, TOKEN, TENANT, pipeline_id, key).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.body["executionId"].as_str().expect("id").to_owned()
}

pub async fn pending_interaction(addr: SocketAddr, id: &str) -> Option<String> {
    support::http::pending_interaction(addr, TOKEN, TENANT, id).await
}

pub async fn complete_interaction(addr: SocketAddr, interaction: &str) -> Value {
    support::http::complete_interaction(addr, TOKEN, TENANT, interaction).await
}
