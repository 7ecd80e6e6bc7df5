//! The sweeper's trigger: an EventBridge Scheduler schedule that starts the release's sweeper.
//! A sweeper that nothing starts protects nothing, so `deploy` creates it when it is given a
//! role the scheduler can assume (`--schedule-role-arn`).
//!
//! Same rules as the machines: read first, write only what differs, so an unchanged schedule
//! costs no write call. Updating a schedule is safe (it only changes when the next sweep runs).

use aws_sdk_scheduler::types::{FlexibleTimeWindow, FlexibleTimeWindowMode, ScheduleState, Target};
use aws_sdk_scheduler::Client;
use serde::Serialize;

use super::errors::{self, scheduler, Kind};
use crate::error::Error;

const SCOPE: &str = "DEPLOY";
/// The sweeper reads everything it needs from its own ARN; its input is empty.
const INPUT: &str = "{}";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desired {
    pub name: String,
    pub expression: String,
    /// The sweeper's ARN; `None` in a dry run when the sweeper does not exist yet.
    pub sweeper_arn: Option<String>,
    pub role_arn: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    Create,
    Unchanged,
    Update { changes: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub name: String,
    pub expression: String,
    #[serde(flatten)]
    pub action: Action,
    pub write_calls: usize,
}

pub async fn plan(sch: &Client, d: &Desired) -> Result<Action, Error> {
    let got = sch.get_schedule().name(&d.name).send().await;
    let got = match got {
        Ok(got) => got,
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            return Ok(Action::Create)
        }
        Err(e) => return Err(errors::from_sdk(SCOPE, "GetSchedule", e, scheduler::get)),
    };
    let mut changes = Vec::new();
    if got.schedule_expression() != Some(d.expression.as_str()) {
        changes.push(format!(
            "expression {} → {}",
            got.schedule_expression().unwrap_or("-"),
            d.expression
        ));
    }
    let target = got.target();
    if let Some(arn) = &d.sweeper_arn {
        if target.map(|t| t.arn()) != Some(arn.as_str()) {
            changes.push(format!("target → {arn}"));
        }
    }
    if target.map(|t| t.role_arn()) != Some(d.role_arn.as_str()) {
        changes.push(format!("role → {}", d.role_arn));
    }
    if target.and_then(|t| t.input()) != Some(INPUT) {
        changes.push("input → {}".to_string());
    }
    if got.state() == Some(&ScheduleState::Disabled) {
        changes.push("state DISABLED → ENABLED".to_string());
    }
    Ok(if changes.is_empty() {
        Action::Unchanged
    } else {
        Action::Update { changes }
    })
}

/// Plans and, unless `dry_run`, applies.
pub async fn deploy(sch: &Client, d: &Desired, dry_run: bool) -> Result<Report, Error> {
    let action = plan(sch, d).await?;
    let mut report = Report {
        name: d.name.clone(),
        expression: d.expression.clone(),
        action,
        write_calls: 0,
    };
    if dry_run || report.action == Action::Unchanged {
        return Ok(report);
    }
    let Some(sweeper_arn) = &d.sweeper_arn else {
        return Err(errors::failed(
            SCOPE,
            "CreateSchedule",
            Kind::NotFound,
            "the sweeper machine has no ARN yet",
        ));
    };
    let build = |what| {
        move |e: aws_sdk_scheduler::error::BuildError| {
            errors::failed(SCOPE, what, Kind::Validation, e.to_string())
        }
    };
    let window = FlexibleTimeWindow::builder()
        .mode(FlexibleTimeWindowMode::Off)
        .build()
        .map_err(build("schedule window"))?;
    let target = Target::builder()
        .arn(sweeper_arn)
        .role_arn(&d.role_arn)
        .input(INPUT)
        .build()
        .map_err(build("schedule target"))?;
    match report.action {
        Action::Create => {
            sch.create_schedule()
                .name(&d.name)
                .schedule_expression(&d.expression)
                .flexible_time_window(window)
                .target(target)
                .state(ScheduleState::Enabled)
                .send()
                .await
                .map_err(|e| errors::from_sdk(SCOPE, "CreateSchedule", e, scheduler::create))?;
        }
        _ => {
            sch.update_schedule()
                .name(&d.name)
                .schedule_expression(&d.expression)
                .flexible_time_window(window)
                .target(target)
                .state(ScheduleState::Enabled)
                .send()
                .await
                .map_err(|e| errors::from_sdk(SCOPE, "UpdateSchedule", e, scheduler::update))?;
        }
    }
    report.write_calls = 1;
    Ok(report)
}

/// Deletes the schedule `name`; `false` when there was none.
pub async fn delete(sch: &Client, name: &str) -> Result<bool, Error> {
    match sch.delete_schedule().name(name).send().await {
        Ok(_) => Ok(true),
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            Ok(false)
        }
        Err(e) => Err(errors::from_sdk(
            "RELEASES",
            "DeleteSchedule",
            e,
            scheduler::delete,
        )),
    }
}
