//! The adapter-owned wakeup table (`tpf_sfn_wakeup`): one item per TPF execution for its live
//! driver generation (`sk = driver`) and one for its parked wakeup token (`sk = wakeup`). The
//! drivers write both rows with `putItem`; the bridge, the sweeper and `tpf-sfn status` read
//! them.

/// Default table name.
pub const TABLE: &str = "tpf_sfn_wakeup";

/// Partition key attribute: `<tenantId>#<executionId>`.
pub const PK: &str = "pk";
/// Sort key attribute: [`DRIVER_ROW`] or [`WAKEUP_ROW`] (or a bridge checkpoint).
pub const SK: &str = "sk";
/// Sort key of the live-driver pointer row.
pub const DRIVER_ROW: &str = "driver";
/// Sort key of the parked-token row.
pub const WAKEUP_ROW: &str = "wakeup";
/// Partition key of the bridge's stream checkpoints (sort key: `<stream ARN>#<shard id>`).
pub const CHECKPOINT_PK: &str = "bridge#checkpoint";

/// Attributes of the rows.
pub mod attr {
    pub const EXECUTION_ARN: &str = "execution_arn";
    pub const STATE_MACHINE_ARN: &str = "state_machine_arn";
    pub const LINEAGE: &str = "lineage";
    pub const GENERATION: &str = "generation";
    pub const RELEASE_VERSION: &str = "release_version";
    pub const TASK_TOKEN: &str = "task_token";
    pub const UNIT_ID: &str = "unit_id";
    pub const STEP_NAME: &str = "step_name";
    pub const TPF_VERSION: &str = "tpf_version";
    pub const EXPIRES_AT: &str = "expires_at";
    /// A checkpoint row's last stream sequence number read.
    pub const SEQUENCE_NUMBER: &str = "sequence_number";
}

/// The partition key of an execution's rows.
pub fn pk(tenant_id: &str, execution_id: &str) -> String {
    format!("{tenant_id}#{execution_id}")
}

/// [`pk`]'s inverse: `(tenant, execution)`. Tenant ids may not contain `#` in this key format;
/// the execution id is everything after the first `#`.
pub fn split_pk(pk: &str) -> Option<(&str, &str)> {
    pk.split_once('#')
}

/// A checkpoint row's sort key.
pub fn checkpoint_sk(stream_arn: &str, shard_id: &str) -> String {
    format!("{stream_arn}#{shard_id}")
}
