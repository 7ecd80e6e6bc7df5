//! Shared set-up for the TPF reference-model tests: the restaurant-approval pipeline in tenant
//! `restaurant-demo`, release `v1` active, virtual time starting at 2026-11-30T06:40:00Z.
#![allow(dead_code)]

use serde_json::json;
use tpf_model::coordinator::local_release;
use tpf_model::{
    AwaitCompletion, Coordinator, InMemoryStore, PipelineDef, ScriptedWorker, SubmitRequest,
};
use tpf_wire::records::AwaitInteractionRecord;
use tpf_wire::Identity;

pub const TENANT: &str = "restaurant-demo";
pub const PIPELINE: &str = "org.pipelineframework.restaurantapproval";
/// 2026-11-30T06:40:00Z.
pub const T0: i64 = 1_796_020_800_000;
pub const SECOND: i64 = 1_000;
pub const MINUTE: i64 = 60 * SECOND;

pub fn identity(release: &str) -> Identity {
    Identity {
        pipeline_id: PIPELINE.to_owned(),
        contract_version: format!("sha256:{release}"),
        release_version: format!("sha256:{release}"),
    }
}

pub fn coordinator_with(
    pipeline: PipelineDef,
    script: impl FnOnce(ScriptedWorker) -> ScriptedWorker,
) -> Coordinator<InMemoryStore> {
    let worker = script(ScriptedWorker::new(identity("v1")));
    let mut coordinator = Coordinator::new(InMemoryStore::new(), pipeline, worker);
    coordinator
        .register_release(&local_release(TENANT, &identity("v1"), T0 - MINUTE))
        .expect("register v1");
    coordinator
        .activate_release(TENANT, PIPELINE, "sha256:v1", T0 - MINUTE)
        .expect("activate v1");
    coordinator
}

pub fn restaurant(
    script: impl FnOnce(ScriptedWorker) -> ScriptedWorker,
) -> Coordinator<InMemoryStore> {
    coordinator_with(PipelineDef::restaurant(), script)
}

pub fn submit(coordinator: &mut Coordinator<InMemoryStore>, key: &str, now: i64) -> String {
    coordinator
        .submit(
            &SubmitRequest {
                tenant_id: TENANT.to_owned(),
                pipeline_id: PIPELINE.to_owned(),
                execution_key: Some(key.to_owned()),
                input_payload: json!({ "orderId": key }),
            },
            now,
        )
        .expect("submit")
        .execution_id
}

pub fn interactions(
    coordinator: &Coordinator<InMemoryStore>,
    execution_id: &str,
    now: i64,
) -> Vec<AwaitInteractionRecord> {
    coordinator
        .await_interactions(TENANT, execution_id, now)
        .expect("interactions")
}

pub fn completion(interaction_id: &str, decision: &str) -> AwaitCompletion {
    AwaitCompletion {
        tenant_id: TENANT.to_owned(),
        interaction_id: Some(interaction_id.to_owned()),
        correlation_id: None,
        response_payload: json!({ "decision": decision }),
        actor: Some("chef".to_owned()),
    }
}

/// (version, status, step, attempt, cause) for every commit of one execution.
pub fn trace(
    coordinator: &Coordinator<InMemoryStore>,
    execution_id: &str,
) -> Vec<(i64, String, u32, u32, &'static str)> {
    coordinator
        .log()
        .for_execution(TENANT, execution_id)
        .map(|t| {
            (
                t.version,
                t.status.to_string(),
                t.step_index,
                t.attempt,
                t.cause,
            )
        })
        .collect()
}
