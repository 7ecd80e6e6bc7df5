//! The JSON keys of the gateway's documents, for code that lays them out key by key (the Step
//! Functions driver builds its requests and its output in templates, not through serde). Each
//! equals the serde name of its struct's field; the tests below check it against the bytes the
//! structs write, so a renamed field cannot leave a stale key here.

/// `AwsDurableActionRequest`'s 15 keys.
pub mod request {
    pub const OPERATION: &str = "operation";
    pub const TENANT_ID: &str = "tenantId";
    pub const EXECUTION_ID: &str = "executionId";
    pub const IDEMPOTENCY_KEY: &str = "idempotencyKey";
    pub const PIPELINE_ID: &str = "pipelineId";
    pub const CONTRACT_VERSION: &str = "contractVersion";
    pub const RELEASE_VERSION: &str = "releaseVersion";
    pub const INPUT_JSON: &str = "inputJson";
    pub const AWAIT_IDENTITY: &str = "awaitIdentity";
    pub const PROVIDER_EXECUTION_NAME: &str = "providerExecutionName";
    pub const PROVIDER_EXECUTION_ARN: &str = "providerExecutionArn";
    pub const PROVIDER_CALLBACK_ID: &str = "providerCallbackId";
    pub const EXPECTED_VERSION: &str = "expectedVersion";
    pub const REASON: &str = "reason";
    pub const GENERATION: &str = "generation";

    /// Every key in TPF's component order (the order TPF's caller writes them).
    pub const ALL: [&str; 15] = [
        OPERATION,
        TENANT_ID,
        EXECUTION_ID,
        IDEMPOTENCY_KEY,
        PIPELINE_ID,
        CONTRACT_VERSION,
        RELEASE_VERSION,
        INPUT_JSON,
        AWAIT_IDENTITY,
        PROVIDER_EXECUTION_NAME,
        PROVIDER_EXECUTION_ARN,
        PROVIDER_CALLBACK_ID,
        EXPECTED_VERSION,
        REASON,
        GENERATION,
    ];
}

/// `AwsDurableActionResponse`'s keys a driver reads.
pub mod response {
    pub const CHECKPOINT: &str = "checkpoint";
    pub const EXECUTION_STATUS: &str = "executionStatus";
    pub const RESULT_JSON: &str = "resultJson";
}

/// `AwsDurableExecutionCheckpoint`'s keys, in TPF's order.
pub mod checkpoint {
    pub const TENANT_ID: &str = super::request::TENANT_ID;
    pub const EXECUTION_ID: &str = super::request::EXECUTION_ID;
    pub const PIPELINE_ID: &str = super::request::PIPELINE_ID;
    pub const CONTRACT_VERSION: &str = super::request::CONTRACT_VERSION;
    pub const RELEASE_VERSION: &str = super::request::RELEASE_VERSION;

    pub const ALL: [&str; 5] = [
        TENANT_ID,
        EXECUTION_ID,
        PIPELINE_ID,
        CONTRACT_VERSION,
        RELEASE_VERSION,
    ];
}

/// `AwsDurableCallbackSignal`'s keys the driver checks against its checkpoint.
pub mod signal {
    pub const TENANT_ID: &str = super::request::TENANT_ID;
    pub const EXECUTION_ID: &str = super::request::EXECUTION_ID;
    pub const GENERATION: &str = super::request::GENERATION;
}

/// `AwsDurableExecutionInput`'s keys, in TPF's order.
pub mod input {
    pub const TENANT_ID: &str = super::request::TENANT_ID;
    pub const IDEMPOTENCY_KEY: &str = super::request::IDEMPOTENCY_KEY;
    pub const PIPELINE_ID: &str = super::request::PIPELINE_ID;
    pub const CONTRACT_VERSION: &str = super::request::CONTRACT_VERSION;
    pub const RELEASE_VERSION: &str = super::request::RELEASE_VERSION;
    pub const INPUT_JSON: &str = super::request::INPUT_JSON;
    pub const RESUME_EXECUTION_ID: &str = "resumeExecutionId";
    pub const GENERATION: &str = super::request::GENERATION;

    pub const ALL: [&str; 8] = [
        TENANT_ID,
        IDEMPOTENCY_KEY,
        PIPELINE_ID,
        CONTRACT_VERSION,
        RELEASE_VERSION,
        INPUT_JSON,
        RESUME_EXECUTION_ID,
        GENERATION,
    ];
}

/// `AwsDurableExecutionOutput`'s keys, in TPF's order.
pub mod output {
    pub const TENANT_ID: &str = super::request::TENANT_ID;
    pub const EXECUTION_ID: &str = super::request::EXECUTION_ID;
    pub const PIPELINE_ID: &str = super::request::PIPELINE_ID;
    pub const CONTRACT_VERSION: &str = super::request::CONTRACT_VERSION;
    pub const RELEASE_VERSION: &str = super::request::RELEASE_VERSION;
    pub const GENERATION: &str = super::request::GENERATION;
    pub const RESULT_JSON: &str = super::response::RESULT_JSON;

    pub const ALL: [&str; 7] = [
        TENANT_ID,
        EXECUTION_ID,
        PIPELINE_ID,
        CONTRACT_VERSION,
        RELEASE_VERSION,
        GENERATION,
        RESULT_JSON,
    ];
}

/// `AwsDurableStartResponse`'s keys: what the starter answers.
pub mod start_response {
    pub const DURABLE_EXECUTION_NAME: &str = "durableExecutionName";
    pub const STATUS_CODE: &str = "statusCode";
}

/// A generation's output when it handed over instead of finishing: the execution's identity
/// (TPF's output keys without the result), and the next generation's name under this key.
pub const HANDED_OVER_TO: &str = "handedOverTo";

/// The queue transport's message: the gateway request, the task token the relay answers, and
/// whether the call parks (REGISTER_CALLBACK: the relay answers only a failure, the wake-up
/// answers the token).
pub mod relay {
    pub const GATEWAY_REQUEST: &str = "gatewayRequest";
    pub const TASK_TOKEN: &str = "taskToken";
    pub const PARK: &str = "park";
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::gateway::host::ExecutionOutput;
    use crate::gateway::records::{AwaitIdentity, CallbackSignal, ExecutionCheckpoint};
    use crate::gateway::request::ActionRequest;
    use crate::gateway::response::ActionResponse;
    use crate::gateway::start::{ExecutionInput, ReleaseIdentity};
    use crate::gateway::Operation;

    fn keys(json: &str) -> Vec<String> {
        match serde_json::from_str::<Value>(json).unwrap() {
            Value::Object(m) => m.keys().cloned().collect(),
            _ => panic!("not an object"),
        }
    }

    fn checkpoint() -> ExecutionCheckpoint {
        ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r")).unwrap()
    }

    #[test]
    fn the_keys_are_the_structs_own_in_tpf_order() {
        let cp = crate::gateway::DriverCheckpoint::new(checkpoint(), 1).unwrap();
        let r = ActionRequest::for_execution(Operation::Status, &cp).unwrap();
        assert_eq!(keys(&r.to_json()), request::ALL);
        let ck = serde_json::to_string(&checkpoint()).unwrap();
        assert_eq!(keys(&ck), checkpoint::ALL);
        let resp = keys(&ActionResponse::submitted(checkpoint(), false).to_json());
        for k in [
            response::CHECKPOINT,
            response::EXECUTION_STATUS,
            response::RESULT_JSON,
        ] {
            assert!(resp.iter().any(|r| r == k), "{k}");
        }
        let release = ReleaseIdentity {
            pipeline_id: Some("p"),
            contract_version: Some("c"),
            release_version: Some("r"),
        };
        let input =
            ExecutionInput::new(Some("t"), Some("k"), release, Some("{}"), None, 1).unwrap();
        assert_eq!(keys(&input.to_json()), input::ALL);
        let out = ExecutionOutput::new(&checkpoint(), 1, "{}");
        assert_eq!(keys(&out.to_json()), output::ALL);
        let started = crate::gateway::start::StartResponse {
            durable_execution_name: "n".into(),
            status_code: 202,
        };
        let started = keys(&serde_json::to_string(&started).unwrap());
        assert_eq!(
            started,
            [
                start_response::DURABLE_EXECUTION_NAME,
                start_response::STATUS_CODE
            ]
        );
        let id = AwaitIdentity::new(Some("t"), Some("e"), Some("i"), Some("c"), 2).unwrap();
        let s = serde_json::to_value(CallbackSignal::new(&id, Some("COMPLETED")).unwrap()).unwrap();
        for k in [signal::TENANT_ID, signal::EXECUTION_ID, signal::GENERATION] {
            assert!(s.get(k).is_some(), "{k}");
        }
    }
}
