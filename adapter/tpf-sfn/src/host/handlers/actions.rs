//! Action API v1: `process-work-item` and `sweep-once`, the two calls a driver makes.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use tpf_wire::action::{ProcessWorkItemRequest, SweepOnceRequest};

use super::{parse, run, ApiError, ApiResult};
use crate::host::limits::MAX_SWEEP_LIMIT;
use crate::host::path::TenantPath;
use crate::host::{HostState, HostStore};

pub async fn process_work_item<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, execution_id)): TenantPath<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let req: ProcessWorkItemRequest = parse(&body)?;
    run(state, move |host, now| {
        Ok(host
            .process_work_item(&tenant_id, &execution_id, &req, now)?
            .to_json())
    })
    .await
}

pub async fn sweep_once<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    body: Bytes,
) -> ApiResult {
    let req: SweepOnceRequest = parse(&body)?;
    // TPF's sweep result requires a positive limit; a huge one would read and answer the
    // whole table in one request.
    if !(1..=MAX_SWEEP_LIMIT).contains(&req.limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be from 1 to {MAX_SWEEP_LIMIT}, not {}",
            req.limit
        )));
    }
    run(state, move |host, now| {
        Ok(host.sweep_once(&req, now)?.to_json())
    })
    .await
}
