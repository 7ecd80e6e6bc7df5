//! `releases` and `prune`: the deployed releases, found by their `tpf-sfn:*` tags (Step
//! Functions: the release's state machines; Lambda durable functions: the release's driver
//! function), and which of them can go.
//!
//! A release may be deleted only when nothing needs it: no RUNNING execution (a parked driver
//! is RUNNING for as long as TPF waits) and it is not the active release of any tenant in TPF's
//! release registry. TPF's registry, not the engine, decides what is active.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use tpf_sfn_compiler::lowering::manifest::TAG_PREFIX;
use tpf_wire::records::{DynamoItem, ReleaseActivationEvent, ACTIVATION_RECORD};

use super::deploy::{read_tags, running_executions};
use super::dynamo_item::from_sdk;
use super::errors::{self, sfn as classify, Kind};
use super::release::Identity;
use crate::error::Error;

const SCOPE: &str = "RELEASES";

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseMachine {
    /// The state machine's or the driver function's name.
    pub name: String,
    pub arn: String,
    pub role: String,
    pub identity: Identity,
    pub definition_sha256: String,
    pub compiler_version: String,
    pub running_executions: usize,
}

/// Every state machine carrying tpf-sfn's identity tags, optionally only names starting with
/// `name_prefix`, with its count of RUNNING executions.
pub async fn list(
    sfn: &aws_sdk_sfn::Client,
    name_prefix: Option<&str>,
) -> Result<Vec<ReleaseMachine>, Error> {
    let mut machines = Vec::new();
    let mut listed = sfn.list_state_machines().into_paginator().items().send();
    while let Some(m) = listed.next().await {
        let m = m.map_err(|e| errors::from_sdk(SCOPE, "ListStateMachines", e, classify::none))?;
        if name_prefix.is_none_or(|p| m.name().starts_with(p)) {
            machines.push((m.name().to_string(), m.state_machine_arn().to_string()));
        }
    }
    let mut found = Vec::new();
    for (name, arn) in machines {
        let tags = read_tags(sfn, &arn, SCOPE).await?;
        let Some(mut machine) = ReleaseMachine::tagged(name, arn, |k| tags.get(k).cloned(), "")
        else {
            continue;
        };
        machine.running_executions = running_executions(sfn, &machine.arn, SCOPE).await?.len();
        found.push(machine);
    }
    Ok(found)
}

impl ReleaseMachine {
    /// A resource carrying tpf-sfn's identity tags (`tag` looks one up by its full key), with
    /// no RUNNING executions counted yet; `None` without a pipeline and release tag. `role` is
    /// the role when the resource carries none.
    fn tagged(
        name: String,
        arn: String,
        tag: impl Fn(&str) -> Option<String>,
        role: &str,
    ) -> Option<Self> {
        let tag = |k: &str| tag(&format!("{TAG_PREFIX}{k}"));
        Some(ReleaseMachine {
            name,
            arn,
            role: tag("role").unwrap_or_else(|| role.to_owned()),
            identity: Identity {
                pipeline_id: tag("pipeline-id")?,
                contract_version: tag("contract-version").unwrap_or_default(),
                release_version: tag("release-version")?,
            },
            definition_sha256: tag("definition-sha256").unwrap_or_default(),
            compiler_version: tag("compiler-version").unwrap_or_default(),
            running_executions: 0,
        })
    }
}

/// `(pipelineId, releaseVersion)` active for some tenant: the latest activation event per
/// registry key. `None` when the registry table does not exist.
pub async fn active_releases(
    ddb: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Result<Option<BTreeSet<(String, String)>>, Error> {
    // (tenant, pipeline) -> (activated_at, release)
    let mut latest: BTreeMap<(String, String), (i64, String)> = BTreeMap::new();
    let mut rows = ddb
        .scan()
        .table_name(table)
        .filter_expression("record_type = :a")
        .expression_attribute_values(":a", AttributeValue::S(ACTIVATION_RECORD.into()))
        .into_paginator()
        .items()
        .send();
    while let Some(row) = rows.next().await {
        let row = match row {
            Ok(row) => row,
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                return Ok(None)
            }
            Err(e) => {
                return Err(errors::from_sdk(
                    SCOPE,
                    "Scan (release registry)",
                    e,
                    |_| None,
                ))
            }
        };
        let event = ReleaseActivationEvent::from_item(&from_sdk(&row)).map_err(|e| {
            errors::failed(
                SCOPE,
                "Scan (release registry)",
                Kind::Validation,
                format!("an ACTIVATION row is not TPF's activation event: {e}"),
            )
        })?;
        let (at, release) = (event.activated_at_epoch_ms, event.release_version);
        let e = latest
            .entry((event.tenant_id, event.pipeline_id))
            .or_insert((at, release.clone()));
        if at > e.0 || (at == e.0 && release > e.1) {
            *e = (at, release);
        }
    }
    Ok(Some(
        latest
            .into_iter()
            .map(|((_, pipeline), (_, release))| (pipeline, release))
            .collect(),
    ))
}

/// The tag role of a release's durable driver function when the function carries none.
pub const DURABLE_ROLE: &str = "durable-driver";

/// Every Lambda function carrying tpf-sfn's identity tags (a Lambda durable functions release's
/// driver), optionally only names starting with `name_prefix`, with its count of RUNNING
/// durable executions over all its published versions.
pub async fn list_durable(
    lambda: &aws_sdk_lambda::Client,
    name_prefix: Option<&str>,
) -> Result<Vec<ReleaseMachine>, Error> {
    let mut functions = Vec::new();
    let mut listed = lambda.list_functions().into_paginator().items().send();
    while let Some(f) = listed.next().await {
        let f = f.map_err(|e| {
            errors::from_sdk(SCOPE, "ListFunctions", e, errors::lambda::list_functions)
        })?;
        let (Some(name), Some(arn)) = (f.function_name(), f.function_arn()) else {
            continue;
        };
        if name_prefix.is_none_or(|p| name.starts_with(p)) {
            functions.push((name.to_owned(), arn.to_owned()));
        }
    }
    let mut found = Vec::new();
    for (name, arn) in functions {
        let tags = lambda
            .list_tags()
            .resource(&arn)
            .send()
            .await
            .map_err(|e| errors::from_sdk(SCOPE, "ListTags", e, errors::lambda::list_tags))?
            .tags
            .unwrap_or_default();
        let Some(mut function) =
            ReleaseMachine::tagged(name, arn, |k| tags.get(k).cloned(), DURABLE_ROLE)
        else {
            continue;
        };
        function.running_executions = running_durable_executions(lambda, &function.name).await?;
        found.push(function);
    }
    Ok(found)
}

async fn running_durable_executions(
    lambda: &aws_sdk_lambda::Client,
    function: &str,
) -> Result<usize, Error> {
    let running = [aws_sdk_lambda::types::ExecutionStatus::Running];
    Ok(
        super::status::durable::list(lambda, SCOPE, function, None, &running)
            .await?
            .len(),
    )
}

/// Deletes a durable release's driver function with every published version: a parked
/// execution pins its version, so prune deletes only a function with none RUNNING.
pub async fn delete_durable(lambda: &aws_sdk_lambda::Client, name: &str) -> Result<(), Error> {
    lambda
        .delete_function()
        .function_name(name)
        .send()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "DeleteFunction", e, errors::lambda::delete))?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneDecision {
    pub machine: ReleaseMachine,
    pub delete: bool,
    pub reason: String,
}

/// Pure: which machines can go. The machines of one release (same pipeline and release
/// version) go together or not at all, so one with RUNNING executions keeps the others.
pub fn prune_plan(
    machines: &[ReleaseMachine],
    active: Option<&BTreeSet<(String, String)>>,
) -> Vec<PruneDecision> {
    let key = |m: &ReleaseMachine| {
        (
            m.identity.pipeline_id.clone(),
            m.identity.release_version.clone(),
        )
    };
    let busy: BTreeSet<(String, String)> = machines
        .iter()
        .filter(|m| m.running_executions > 0)
        .map(key)
        .collect();
    machines
        .iter()
        .map(|m| {
            let k = key(m);
            let (delete, reason) = if m.running_executions > 0 {
                (
                    false,
                    format!("{} RUNNING execution(s)", m.running_executions),
                )
            } else if busy.contains(&k) {
                (
                    false,
                    "the release's other machine has RUNNING executions".to_string(),
                )
            } else if active.is_some_and(|a| a.contains(&k)) {
                (false, "active in TPF's release registry".to_string())
            } else {
                (
                    true,
                    "no RUNNING executions and not active in TPF".to_string(),
                )
            };
            PruneDecision {
                machine: m.clone(),
                delete,
                reason,
            }
        })
        .collect()
}

pub async fn delete(sfn: &aws_sdk_sfn::Client, arn: &str) -> Result<(), Error> {
    sfn.delete_state_machine()
        .state_machine_arn(arn)
        .send()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "DeleteStateMachine", e, classify::delete))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, release: &str, running: usize) -> ReleaseMachine {
        ReleaseMachine {
            name: name.into(),
            arn: format!("arn:{name}"),
            role: "driver".into(),
            identity: Identity {
                pipeline_id: "p".into(),
                contract_version: "c".into(),
                release_version: release.into(),
            },
            definition_sha256: String::new(),
            compiler_version: String::new(),
            running_executions: running,
        }
    }

    #[test]
    fn running_and_active_releases_are_kept() {
        let machines = [
            m("a-driver", "1", 0),
            m("a-driver-copy", "1", 1),
            m("b-driver", "2", 0),
            m("c-driver", "3", 0),
        ];
        let active = BTreeSet::from([("p".to_string(), "2".to_string())]);
        let plan = prune_plan(&machines, Some(&active));
        let deleted: Vec<&str> = plan
            .iter()
            .filter(|d| d.delete)
            .map(|d| d.machine.name.as_str())
            .collect();
        assert_eq!(deleted, ["c-driver"]);
        assert!(plan[0].reason.contains("other machine"));
        assert!(plan[2].reason.contains("active"));
    }
}
