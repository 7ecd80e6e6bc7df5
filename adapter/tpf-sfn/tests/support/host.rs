//! The action host's fixtures for the in-process server tests.

use tpf_sfn::host::pipeline::{self, HostedPipeline};

/// The bundled restaurant contract as `serve` hosts it (30-minute await deadline).
pub fn restaurant() -> HostedPipeline {
    hosted("restaurant-approval.pipeline-contract.json")
}

/// Today's Restaurant Approval contract as `serve` hosts it.
#[allow(dead_code)] // not every test binary that includes `support` uses it
pub fn restaurant_current() -> HostedPipeline {
    hosted("restaurant-approval-current.pipeline-contract.json")
}

fn hosted(file: &str) -> HostedPipeline {
    let path = format!(
        "{}/../../examples/contracts/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).expect("contract");
    pipeline::load(&path, &bytes, &[], None, 30 * 60 * 1000).expect("pipeline")
}

/// The restaurant host on the in-memory store with its release active for `tenant`, as
/// `serve --activate-tenant` starts it.
#[allow(dead_code)]
pub fn activated(
    tenant: &str,
    token: &str,
) -> std::sync::Arc<tpf_sfn::host::HostState<tpf_model::InMemoryStore>> {
    use tpf_model::{coordinator::local_release, Coordinator, InMemoryStore};
    use tpf_sfn::host::{system_clock, HostState};
    let hosted = restaurant();
    let mut coordinator = Coordinator::new(InMemoryStore::new(), hosted.pipeline, hosted.worker);
    let now = system_clock();
    coordinator
        .register_release(&local_release(tenant, &hosted.identity, now))
        .expect("register");
    coordinator
        .activate_release(
            tenant,
            &hosted.identity.pipeline_id,
            &hosted.identity.release_version,
            now,
        )
        .expect("activate");
    std::sync::Arc::new(HostState::new(coordinator, token.to_owned(), system_clock))
}

/// A gateway SUBMIT of the restaurant release for `tenant`, all 15 keys as TPF's caller sends
/// them.
#[allow(dead_code)]
pub fn gateway_submit(tenant: &str, key: &str) -> serde_json::Value {
    let identity = restaurant().identity;
    serde_json::json!({
        "operation": "SUBMIT", "tenantId": tenant, "executionId": null, "idempotencyKey": key,
        "pipelineId": identity.pipeline_id, "contractVersion": identity.contract_version,
        "releaseVersion": identity.release_version, "inputJson": "{\"orderId\":\"o-1\"}",
        "awaitIdentity": null, "providerExecutionName": null, "providerExecutionArn": null,
        "providerCallbackId": null, "expectedVersion": null, "reason": null, "generation": 1
    })
}
