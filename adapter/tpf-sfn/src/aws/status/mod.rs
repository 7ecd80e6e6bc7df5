//! `status`: TPF's execution record next to the driver generations the engine ran for it (Step
//! Functions executions or Lambda durable executions), and a verdict on whether the two agree.
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
use tpf_wire::wakeup::{self, attr};

use super::deploy::find_machine;
use super::dynamo_item::from_sdk;
use super::errors::{self, sfn as classify, Kind};
use super::release::Identity;
use crate::error::Error;

pub mod durable;
mod target;
mod verdict;

pub use target::{Host, Naming, Target};
pub use verdict::verdict;

const SCOPE: &str = "STATUS";

/// What to look up.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    pub target: &'a Target,
    pub tenant: &'a str,
    pub execution: &'a str,
    pub execution_table: &'a str,
    pub wakeup_table: &'a str,
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

/// The live-driver pointer the driver writes to the wakeup table (`sk = driver`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WakeupPointer {
    pub execution_arn: Option<String>,
    pub generation: Option<String>,
    pub release_version: Option<String>,
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
    pub wakeup_pointer: Option<WakeupPointer>,
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
    // Only the Action API drivers write the wakeup table's live-driver pointer; a gateway
    // driver's registrations live in TPF's callback-binding table.
    let wakeup_pointer = match q.target.naming {
        Naming::Lineage => read_pointer(ddb, q).await?,
        Naming::Gateway => None,
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
        wakeup_pointer,
        verdict,
    })
}

/// Which execution names are this TPF execution's driver generations.
pub enum GenerationNames {
    /// The execution id and its suffixes (Action API v1 drivers).
    Lineage(String),
    /// TPF's durable names of generations 1, 2, …: `(tenant, idempotency key)`; `None` when
    /// TPF has no record to read the key from.
    Gateway(Option<(String, String)>),
}

/// How many generations of one execution `status` looks for by name; TPF's host starts one per
/// park or driver loss, so a real lineage stays far below.
const GENERATION_LIMIT: i64 = 1000;

impl GenerationNames {
    fn of(q: &Query<'_>, record: Option<&RecordView>) -> Self {
        match q.target.naming {
            Naming::Lineage => Self::Lineage(q.execution.to_string()),
            Naming::Gateway => Self::Gateway(record.and_then(|r| {
                tpf_wire::ids::client_execution_key(
                    &r.identity.pipeline_id,
                    &r.identity.release_version,
                    &r.execution_key,
                )
                .map(|k| (q.tenant.to_string(), k.to_string()))
            })),
        }
    }

    /// Whether `name` is one of the generations; with its generation when the naming says.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Lineage(id) => is_generation_of(name, id),
            Self::Gateway(Some(_)) => self.gateway_names().any(|n| n == name),
            Self::Gateway(None) => false,
        }
    }

    /// TPF's durable names, generation 1 first.
    pub fn gateway_names(&self) -> impl Iterator<Item = String> + '_ {
        let key = match self {
            Self::Gateway(Some(key)) => Some(key),
            _ => None,
        };
        key.into_iter().flat_map(|(tenant, key)| {
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

/// The wakeup table is the adapter's own; a missing table or row only means no pointer.
async fn read_pointer(
    ddb: &aws_sdk_dynamodb::Client,
    q: &Query<'_>,
) -> Result<Option<WakeupPointer>, Error> {
    let out = ddb
        .get_item()
        .table_name(q.wakeup_table)
        .key(
            wakeup::PK,
            AttributeValue::S(wakeup::pk(q.tenant, q.execution)),
        )
        .key(wakeup::SK, AttributeValue::S(wakeup::DRIVER_ROW.to_owned()))
        .send()
        .await;
    let out = match out {
        Ok(out) => out,
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            return Ok(None)
        }
        Err(e) => {
            return Err(errors::from_sdk(SCOPE, "GetItem (wakeup table)", e, |_| {
                None
            }))
        }
    };
    let Some(item) = out.item() else {
        return Ok(None);
    };
    let s = |k: &str| match item.get(k) {
        Some(AttributeValue::S(s) | AttributeValue::N(s)) => Some(s.clone()),
        _ => None,
    };
    Ok(Some(WakeupPointer {
        execution_arn: s(attr::EXECUTION_ARN),
        generation: s(attr::GENERATION),
        release_version: s(tpf_attr::RELEASE_VERSION),
    }))
}

/// Whether `name` is a driver execution of TPF execution `id` under Action API v1's naming: the
/// id itself, then any of the suffixes v1's driver and sweeper appended (`-g<N>` rollover,
/// `-r<V>` re-drive, `-s<V>` sweeper recovery). A plain prefix test would also match a different execution `<id>-x`.
pub fn is_generation_of(name: &str, id: &str) -> bool {
    let Some(rest) = name.strip_prefix(id) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let Some(rest) = rest.strip_prefix('-') else {
        return false;
    };
    rest.split('-').all(|seg| {
        let mut c = seg.chars();
        matches!(c.next(), Some('g' | 'r' | 's'))
            && !c.as_str().is_empty()
            && c.as_str().chars().all(|d| d.is_ascii_digit())
    })
}

async fn generations(
    sfn: &aws_sdk_sfn::Client,
    machine_arn: &str,
    names: &GenerationNames,
    q: &Query<'_>,
) -> Result<Vec<Generation>, Error> {
    let found = match names {
        GenerationNames::Lineage(_) => listed(sfn, machine_arn, names).await?,
        GenerationNames::Gateway(_) => named(sfn, machine_arn, names).await?,
    };
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

/// The machine's executions whose names match, oldest first: `(arn, name)`.
async fn listed(
    sfn: &aws_sdk_sfn::Client,
    machine_arn: &str,
    names: &GenerationNames,
) -> Result<Vec<(String, String)>, Error> {
    let mut found = Vec::new();
    let mut executions = sfn
        .list_executions()
        .state_machine_arn(machine_arn)
        .into_paginator()
        .items()
        .send();
    while let Some(e) = executions.next().await {
        let e =
            e.map_err(|e| errors::from_sdk(SCOPE, "ListExecutions", e, classify::list_executions))?;
        if names.matches(e.name()) {
            found.push((
                e.start_date().as_nanos(),
                e.execution_arn().to_string(),
                e.name().to_string(),
            ));
        }
    }
    found.sort();
    Ok(found
        .into_iter()
        .map(|(_, arn, name)| (arn, name))
        .collect())
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
    use super::*;

    #[test]
    fn generation_names() {
        for n in ["e1", "e1-g1", "e1-r3", "e1-s7", "e1-r3-g12"] {
            assert!(is_generation_of(n, "e1"), "{n}");
        }
        for n in ["e10", "e1-x", "e1-g", "e1-gx", "e2", "e1-", "e"] {
            assert!(!is_generation_of(n, "e1"), "{n}");
        }
    }

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
