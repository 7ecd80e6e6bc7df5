//! Deploying a release's machines: read everything, decide every action, and only then write.
//!
//! The client is a parameter so tests can hand in a mocked one. All reads happen before the
//! first write, so a refusal never leaves a half-deployed release behind.

use std::collections::BTreeMap;

use aws_sdk_sfn::types::{
    CloudWatchLogsLogGroup, ExecutionStatus, LogDestination, LogLevel, LoggingConfiguration, Tag,
    TracingConfiguration,
};
use aws_sdk_sfn::Client;
use serde::Serialize;

use super::errors::{self, sfn as classify};
use super::plan::{self, Action, Deployed, Desired, LoggingState};
use super::release::{Identity, Release};
use crate::error::Error;

const SCOPE: &str = "DEPLOY";

#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    pub role_arn: Option<&'a str>,
    pub dry_run: bool,
    pub force_replace: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineReport {
    pub role: &'static str,
    pub name: String,
    pub arn: Option<String>,
    #[serde(flatten)]
    pub action: Action,
    /// RUNNING executions of a machine whose definition `--force-replace` changes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub running_executions: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub identity: Identity,
    pub dry_run: bool,
    pub machines: Vec<MachineReport>,
    /// Create/Update/Tag calls made; 0 for an unchanged release, a refusal or a dry run.
    pub write_calls: usize,
}

impl Report {
    pub fn refused(&self) -> bool {
        self.machines
            .iter()
            .any(|m| matches!(m.action, Action::Refuse { .. }))
    }
}

/// Deploys (or plans, with `dry_run`) every machine of `release`. `progress` receives one line
/// per machine as it is written.
pub async fn deploy(
    sfn: &Client,
    release: &Release,
    opts: Options<'_>,
    progress: &mut dyn FnMut(String),
) -> Result<Report, Error> {
    let logging = LoggingState::from_manifest(&release.manifest.logging);
    let tracing = release.manifest.tracing;
    let mut machines = Vec::new();
    for m in &release.machines {
        let deployed = match find_machine(sfn, &m.name, SCOPE).await? {
            Some(arn) => Some(read_deployed(sfn, &arn).await?),
            None => None,
        };
        let desired = Desired {
            machine: m,
            logging: logging.clone(),
            tracing,
            role_arn: opts.role_arn,
        };
        let action = plan::plan(&desired, deployed.as_ref(), opts.force_replace);
        let running_executions = match (&action, &deployed) {
            (Action::Replace { .. }, Some(d)) => running_executions(sfn, &d.arn, SCOPE).await?,
            _ => Vec::new(),
        };
        machines.push(MachineReport {
            role: m.role,
            name: m.name.clone(),
            arn: deployed.map(|d| d.arn),
            action,
            running_executions,
        });
    }
    let mut report = Report {
        identity: release.manifest.identity.clone(),
        dry_run: opts.dry_run,
        machines,
        write_calls: 0,
    };
    if opts.dry_run || report.refused() {
        return Ok(report);
    }
    let Some(role_arn) = opts.role_arn else {
        return Err(errors::failed(
            SCOPE,
            "deploy",
            super::errors::Kind::Configuration,
            "--role-arn is required to create or update machines",
        ));
    };
    let total = report.machines.len();
    for (i, (m, r)) in release
        .machines
        .iter()
        .zip(&mut report.machines)
        .enumerate()
    {
        let head = format!("[{}/{total}] {} {}", i + 1, m.role, m.name);
        match &r.action {
            Action::Unchanged | Action::Refuse { .. } => {
                progress(format!("{head}: unchanged"));
            }
            Action::Create => {
                let out = sfn
                    .create_state_machine()
                    .name(&m.name)
                    .definition(&m.definition_text)
                    .role_arn(role_arn)
                    .r#type(aws_sdk_sfn::types::StateMachineType::Standard)
                    .set_logging_configuration(logging_config(&logging, false))
                    .tracing_configuration(TracingConfiguration::builder().enabled(tracing).build())
                    .set_tags(Some(sdk_tags(&m.tags, None)))
                    .send()
                    .await
                    .map_err(|e| {
                        errors::from_sdk(SCOPE, "CreateStateMachine", e, classify::create)
                    })?;
                report.write_calls += 1;
                r.arn = Some(out.state_machine_arn().to_string());
                progress(format!("{head}: created"));
            }
            Action::Update { tags, settings } => {
                let arn = r.arn.clone().unwrap_or_default();
                if !settings.is_empty() {
                    update(sfn, &arn, None, role_arn, &logging, tracing).await?;
                    report.write_calls += 1;
                }
                if !tags.is_empty() {
                    tag(sfn, &arn, &m.tags, tags).await?;
                    report.write_calls += 1;
                }
                progress(format!(
                    "{head}: updated {}",
                    settings
                        .iter()
                        .cloned()
                        .chain(tags.iter().map(|t| format!("tag {t}")))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            Action::Replace { tags, .. } => {
                let arn = r.arn.clone().unwrap_or_default();
                update(
                    sfn,
                    &arn,
                    Some(&m.definition_text),
                    role_arn,
                    &logging,
                    tracing,
                )
                .await?;
                report.write_calls += 1;
                if !tags.is_empty() {
                    tag(sfn, &arn, &m.tags, tags).await?;
                    report.write_calls += 1;
                }
                progress(format!("{head}: definition replaced (forced)"));
            }
        }
    }
    Ok(report)
}

async fn update(
    sfn: &Client,
    arn: &str,
    definition: Option<&str>,
    role_arn: &str,
    logging: &LoggingState,
    tracing: bool,
) -> Result<(), Error> {
    sfn.update_state_machine()
        .state_machine_arn(arn)
        .set_definition(definition.map(str::to_string))
        .role_arn(role_arn)
        .set_logging_configuration(logging_config(logging, true))
        .tracing_configuration(TracingConfiguration::builder().enabled(tracing).build())
        .send()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "UpdateStateMachine", e, classify::update))?;
    Ok(())
}

async fn tag(
    sfn: &Client,
    arn: &str,
    tags: &BTreeMap<String, String>,
    keys: &[String],
) -> Result<(), Error> {
    sfn.tag_resource()
        .resource_arn(arn)
        .set_tags(Some(sdk_tags(tags, Some(keys))))
        .send()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "TagResource", e, classify::tag))?;
    Ok(())
}

fn sdk_tags(tags: &BTreeMap<String, String>, only: Option<&[String]>) -> Vec<Tag> {
    tags.iter()
        .filter(|(k, _)| only.is_none_or(|keys| keys.contains(k)))
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

/// OFF is omitted on create (the service default) but sent on update, where omitting it would
/// keep a previously enabled configuration.
fn logging_config(l: &LoggingState, explicit_off: bool) -> Option<LoggingConfiguration> {
    if l.level == "OFF" {
        return explicit_off.then(|| LoggingConfiguration::builder().level(LogLevel::Off).build());
    }
    let mut b = LoggingConfiguration::builder()
        .level(LogLevel::from(l.level.as_str()))
        .include_execution_data(l.include_execution_data);
    if let Some(arn) = &l.log_group_arn {
        b = b.destinations(
            LogDestination::builder()
                .cloud_watch_logs_log_group(
                    CloudWatchLogsLogGroup::builder().log_group_arn(arn).build(),
                )
                .build(),
        );
    }
    Some(b.build())
}

/// The ARN of the machine called `name`, found by listing (names are unique per account and
/// region; the ARN's account id is not known up front).
pub async fn find_machine(
    sfn: &Client,
    name: &str,
    scope: &'static str,
) -> Result<Option<String>, Error> {
    let mut machines = sfn.list_state_machines().into_paginator().items().send();
    while let Some(m) = machines.next().await {
        let m = m.map_err(|e| errors::from_sdk(scope, "ListStateMachines", e, classify::none))?;
        if m.name() == name {
            return Ok(Some(m.state_machine_arn().to_string()));
        }
    }
    Ok(None)
}

pub async fn read_deployed(sfn: &Client, arn: &str) -> Result<Deployed, Error> {
    let d = sfn
        .describe_state_machine()
        .state_machine_arn(arn)
        .send()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "DescribeStateMachine", e, classify::describe))?;
    let tags = read_tags(sfn, arn, SCOPE).await?;
    let logging = match d.logging_configuration() {
        Some(l) => LoggingState {
            level: l
                .level()
                .map(|l| l.as_str().to_string())
                .unwrap_or_else(|| "OFF".to_string()),
            include_execution_data: l.include_execution_data(),
            log_group_arn: l
                .destinations()
                .iter()
                .find_map(|d| d.cloud_watch_logs_log_group()?.log_group_arn())
                .map(str::to_string),
        },
        None => LoggingState::off(),
    };
    Ok(Deployed {
        arn: arn.to_string(),
        definition: d.definition().to_string(),
        role_arn: d.role_arn().to_string(),
        logging,
        tracing: d.tracing_configuration().is_some_and(|t| t.enabled()),
        tags,
    })
}

pub async fn read_tags(
    sfn: &Client,
    arn: &str,
    scope: &'static str,
) -> Result<BTreeMap<String, String>, Error> {
    let out = sfn
        .list_tags_for_resource()
        .resource_arn(arn)
        .send()
        .await
        .map_err(|e| errors::from_sdk(scope, "ListTagsForResource", e, classify::tags))?;
    Ok(out
        .tags()
        .iter()
        .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or("").to_string())))
        .collect())
}

/// Names of the machine's RUNNING executions, every page.
pub async fn running_executions(
    sfn: &Client,
    arn: &str,
    scope: &'static str,
) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    let mut executions = sfn
        .list_executions()
        .state_machine_arn(arn)
        .status_filter(ExecutionStatus::Running)
        .into_paginator()
        .items()
        .send();
    while let Some(e) = executions.next().await {
        let e =
            e.map_err(|e| errors::from_sdk(scope, "ListExecutions", e, classify::list_executions))?;
        names.push(e.name().to_string());
    }
    Ok(names)
}
