//! `status`: TPF's execution record next to the driver generations the engine ran for it (Step
//! Functions executions or Lambda durable executions), and a verdict on whether the two agree.
//!
//! Only gateway releases: their generations carry TPF's own durable names (`tpf-…`, generation 1
//! first), so they are read by name. A release compiled for Action API v1 is refused
//! (`target.rs`).
//!
//! TPF's record is authoritative; the driver is only a wakeup mechanism. So every verdict is
//! phrased as "what the driver should be doing given TPF's record", with a fix that never edits
//! TPF's record.

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_sfn::primitives::{DateTime, DateTimeFormat};
use aws_sdk_sfn::types::ExecutionStatus;
use serde::Serialize;
use tpf_wire::records::attr as tpf_attr;
use tpf_wire::records::{DynamoItem, ExecutionRecord};

use super::deploy::find_machine;
use super::dynamo_item::from_sdk;
use super::errors::{self, sfn as classify, Kind};
use super::release::Identity;
use crate::error::Error;

pub mod durable;
mod target;
mod verdict;

pub use target::{Host, Target};
pub use verdict::verdict;

const SCOPE: &str = "STATUS";

/// What to look up.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    pub target: &'a Target,
    pub tenant: &'a str,
    pub execution: &'a str,
    pub execution_table: &'a str,
    /// The region for console links; `None` against a local emulator, whose executions are in
    /// no AWS console.
    pub console_region: Option<&'a str>,
}

/// TPF's record, reduced to what an operator reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordView {
    /// The key the application submitted with, scoped by TPF; a gateway driver's generations
    /// are named from it.
    pub execution_key: String,
    pub status: String,
    pub terminal: bool,
    pub version: i64,
    pub current_step_index: u32,
    pub attempt: u32,
    pub await_unit_id: Option<String>,
    /// `None` when TPF has nothing scheduled (`Long.MAX_VALUE` while waiting externally) and
    /// for a terminal record, whose row keeps the last due time it had.
    pub next_due: Option<String>,
    pub identity: Identity,
    pub error_code: Option<String>,
}

impl RecordView {
    pub fn from_record(r: &ExecutionRecord) -> Self {
        Self {
            execution_key: r.execution_key.clone(),
            status: r.status.as_str().to_string(),
            terminal: r.status.terminal(),
            version: r.version,
            current_step_index: r.current_step_index,
            attempt: r.attempt,
            await_unit_id: r.await_unit_id.clone(),
            next_due: (r.next_due_epoch_ms != i64::MAX && !r.status.terminal())
                .then(|| fmt_time(&DateTime::from_millis(r.next_due_epoch_ms))),
            identity: Identity {
                pipeline_id: r.pipeline_id.clone(),
                contract_version: r.contract_version.clone(),
                release_version: r.release_version.clone(),
            },
            error_code: r.error_code.clone(),
        }
    }
}

/// One driver execution of this TPF execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Generation {
    pub name: String,
    pub arn: String,
    pub status: String,
    pub started: String,
    pub stopped: Option<String>,
    /// The last state entered: where a running driver is parked, or where an ended one stopped.
    pub current_state: Option<String>,
    pub error: Option<String>,
    /// `None` for an emulator's execution.
    pub console_url: Option<String>,
}

impl Generation {
    pub fn live(&self) -> bool {
        self.status == "RUNNING" || self.status == "PENDING_REDRIVE"
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub diverged: bool,
    /// `STATUS_OK` or `STATUS_<divergence>`.
    pub code: &'static str,
    pub summary: String,
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub tenant: String,
    pub execution: String,
    pub release: Identity,
    /// The state machine's or the durable driver function's name.
    pub driver: String,
    /// Its ARN when deployed.
    pub driver_arn: Option<String>,
    pub record: Option<RecordView>,
    pub generations: Vec<Generation>,
    pub verdict: Verdict,
}

pub async fn status(
    sfn: &aws_sdk_sfn::Client,
    lambda: &aws_sdk_lambda::Client,
    ddb: &aws_sdk_dynamodb::Client,
    q: &Query<'_>,
) -> Result<Report, Error> {
    let record = read_record(ddb, q).await?;
    let names = GenerationNames::of(q, record.as_ref());
    let (driver_arn, generations) = match q.target.host {
        Host::StateMachine => {
            let arn = find_machine(sfn, &q.target.driver, SCOPE).await?;
            let generations = match &arn {
                Some(arn) => generations(sfn, arn, &names, q).await?,
                None => Vec::new(),
            };
            (arn, generations)
        }
        Host::DurableFunction => durable::generations(lambda, &names, q).await?,
    };
    let verdict = verdict(
        &q.target.identity,
        record.as_ref(),
        driver_arn.is_some(),
        &generations,
        &names,
        q,
    );
    Ok(Report {
        tenant: q.tenant.to_string(),
        execution: q.execution.to_string(),
        release: q.target.identity.clone(),
        driver: q.target.driver.clone(),
        driver_arn,
        record,
        generations,
        verdict,
    })
}

/// Which execution names are this TPF execution's driver generations: TPF's durable names of
/// generations 1, 2, …, from `(tenant, idempotency key)`; `None` when TPF has no record to read
/// the key from.
pub struct GenerationNames(Option<(String, String)>);

/// How many generations of one execution `status` looks for by name; TPF's host starts one per
/// park or driver loss, so a real lineage stays far below.
const GENERATION_LIMIT: i64 = 1000;

impl GenerationNames {
    fn of(q: &Query<'_>, record: Option<&RecordView>) -> Self {
        Self(record.and_then(|r| {
            tpf_wire::ids::client_execution_key(
                &r.identity.pipeline_id,
                &r.identity.release_version,
                &r.execution_key,
            )
            .map(|k| (q.tenant.to_string(), k.to_string()))
        }))
    }

    /// TPF's durable names, generation 1 first.
    pub fn gateway_names(&self) -> impl Iterator<Item = String> + '_ {
        self.0.iter().flat_map(|(tenant, key)| {
            (1..=GENERATION_LIMIT).map_while(move |g| {
                tpf_wire::gateway::names::durable_execution_name(Some(tenant), Some(key), g).ok()
            })
        })
    }
}

async fn read_record(
    ddb: &aws_sdk_dynamodb::Client,
    q: &Query<'_>,
) -> Result<Option<RecordView>, Error> {
    let out = ddb
        .get_item()
        .table_name(q.execution_table)
        .key(tpf_attr::TENANT_ID, AttributeValue::S(q.tenant.to_string()))
        .key(tpf_attr::EXECUTION_ID, AttributeValue::S(q.execution.to_string()))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| {
            let missing = e
                .as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception());
            let error = errors::from_sdk(SCOPE, "GetItem (execution table)", e, |e| {
                e.is_resource_not_found_exception()
                    .then_some(Kind::NotFound)
            });
            if missing {
                error.with_hint(format!(
                    "no table {}: name TPF's tables with --prefix and --table execution-table=NAME, and check --region and --endpoint-url",
                    q.execution_table
                ))
            } else {
                error
            }
        })?;
    let Some(item) = out.item() else {
        return Ok(None);
    };
    let record = ExecutionRecord::from_item(&from_sdk(item)).map_err(|e| {
        errors::failed(
            SCOPE,
            "GetItem (execution table)",
            Kind::Validation,
            format!("the row is not a TPF ExecutionRecord: {e}"),
        )
    })?;
    Ok(Some(RecordView::from_record(&record)))
}

async fn generations(
    sfn: &aws_sdk_sfn::Client,
    machine_arn: &str,
    names: &GenerationNames,
    q: &Query<'_>,
) -> Result<Vec<Generation>, Error> {
    let found = named(sfn, machine_arn, names).await?;
    let mut gens = Vec::new();
    for (arn, name) in found {
        let d = sfn
            .describe_execution()
            .execution_arn(&arn)
            .send()
            .await
            .map_err(|e| {
                errors::from_sdk(SCOPE, "DescribeExecution", e, classify::describe_execution)
            })?;
        let current_state = current_state(sfn, &arn).await?;
        gens.push(Generation {
            console_url: q.console_region.map(|region| console_url(region, &arn)),
            name,
            status: status_str(d.status()),
            started: fmt_time(d.start_date()),
            stopped: d.stop_date().map(fmt_time),
            current_state,
            error: d.error().map(str::to_string),
            arn,
        });
    }
    Ok(gens)
}

/// A gateway driver's generations by their names, generation 1 up to the first that never
/// ran: an execution's ARN is its machine's with `execution` for `stateMachine` and the name
/// appended, so no listing of every execution the machine ever ran is needed.
async fn named(
    sfn: &aws_sdk_sfn::Client,
    machine_arn: &str,
    names: &GenerationNames,
) -> Result<Vec<(String, String)>, Error> {
    let Some(base) = machine_arn
        .split_once(":stateMachine:")
        .map(|(head, machine)| format!("{head}:execution:{machine}:"))
    else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for name in names.gateway_names() {
        let arn = format!("{base}{name}");
        match sfn.describe_execution().execution_arn(&arn).send().await {
            Ok(_) => found.push((arn, name)),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_execution_does_not_exist()) =>
            {
                break
            }
            Err(e) => {
                return Err(errors::from_sdk(
                    SCOPE,
                    "DescribeExecution",
                    e,
                    classify::describe_execution,
                ))
            }
        }
    }
    Ok(found)
}

/// The most recent `StateEntered` event, through the SDK's paginator. Asks for the newest
/// events first and stops at the first page that has one; a service that ignores
/// `reverseOrder` (moto does) gives pages oldest first, so then every page is read and the
/// event is picked by id.
async fn current_state(sfn: &aws_sdk_sfn::Client, arn: &str) -> Result<Option<String>, Error> {
    let mut pages = sfn
        .get_execution_history()
        .execution_arn(arn)
        .reverse_order(true)
        .into_paginator()
        .page_size(100)
        .send();
    let mut latest: Option<(i64, String)> = None;
    while let Some(page) = pages.next().await {
        let page =
            page.map_err(|e| errors::from_sdk(SCOPE, "GetExecutionHistory", e, classify::history))?;
        let events = page.events();
        for e in events {
            if let Some(d) = e.state_entered_event_details() {
                if latest.as_ref().is_none_or(|(id, _)| e.id() > *id) {
                    latest = Some((e.id(), d.name().to_string()));
                }
            }
        }
        let newest_first = events.windows(2).all(|w| w[0].id() > w[1].id());
        if latest.is_some() && newest_first {
            break;
        }
    }
    Ok(latest.map(|(_, name)| name))
}

fn status_str(s: &ExecutionStatus) -> String {
    s.as_str().to_string()
}

pub(crate) fn fmt_time(t: &DateTime) -> String {
    t.fmt(DateTimeFormat::DateTime)
        .unwrap_or_else(|_| t.secs().to_string())
}

pub fn console_url(region: &str, arn: &str) -> String {
    format!("https://{region}.console.aws.amazon.com/states/home?region={region}#/v2/executions/details/{arn}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_idempotency_key_is_read_from_tpfs_scoped_key() {
        let scoped = tpf_wire::ids::scoped_root_execution_key("p", "r1", "order:7").unwrap();
        assert_eq!(
            tpf_wire::ids::client_execution_key("p", "r1", &scoped),
            Some("order:7")
        );
        assert_eq!(
            tpf_wire::ids::client_execution_key("p", "r2", &scoped),
            None
        );
        assert_eq!(tpf_wire::ids::client_execution_key("p", "r1", "k"), None);
    }
}
