//! `tpf-sfn deploy`.

use crate::stdio::{errln, outln};
use serde_json::json;

use tpf_sfn_compiler::config::placeholder;
use tpf_sfn_compiler::{Diagnostic, Diagnostics, Location};

use crate::aws::client::Connection;
use crate::aws::deploy::{self, Options, Report};
use crate::aws::plan::Action;
use crate::aws::release::Release;
use crate::aws::schedule;
use crate::cli::{DeployArgs, Format};
use crate::error::Error;
use crate::exit::{CmdResult, Failure};

pub fn run(args: &DeployArgs) -> CmdResult {
    if let Some(manifest) = durable_manifest(&args.out)? {
        return super::deploy_durable::run(args, manifest);
    }
    let release = Release::load(&args.out)?;
    let refusal = refuse_placeholders(&release, &args.connection);
    refused_around_the_plan(refusal, args.dry_run, || plan_and_report(args, &release))
}

/// A placeholder refusal, said before any call (no credentials or network are needed to be
/// told), except on a dry run: that shows the plan first, then the refusal, as `terraform plan`
/// does, and ends with the refusal's exit even when the plan itself failed.
pub(super) fn refused_around_the_plan(
    refusal: CmdResult,
    dry_run: bool,
    plan: impl FnOnce() -> CmdResult,
) -> CmdResult {
    if !dry_run || refusal.is_ok() {
        refusal?;
        return plan();
    }
    if let Err(failure) = plan() {
        if let Some(text) = failure.report() {
            errln!("{text}");
        }
    }
    refusal
}

/// Plans the release against the account and carries the plan out unless `--dry-run`, printing
/// the report.
fn plan_and_report(args: &DeployArgs, release: &Release) -> CmdResult {
    let opts = Options {
        role_arn: args.role_arn.as_deref(),
        dry_run: args.dry_run,
        force_replace: args.force_replace,
    };
    let text = args.format == Format::Text;
    let report = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        let sfn = aws_sdk_sfn::Client::new(&conf);
        let mut progress = |line: String| {
            if text {
                outln!("{line}");
            }
        };
        let report = deploy::deploy(&sfn, release, opts, &mut progress).await?;
        let sweeper = release.manifest.machines.sweeper.as_ref();
        let schedule = match (&args.schedule_role_arn, report.refused(), sweeper) {
            (Some(role), false, Some(sweeper)) => {
                let sch = aws_sdk_scheduler::Client::new(&conf);
                let desired = schedule::Desired {
                    name: tpf_sfn_compiler::sfn::export::schedule_name(&sweeper.name),
                    expression: sweeper
                        .schedule
                        .clone()
                        .unwrap_or_else(|| "rate(1 minute)".to_string()),
                    sweeper_arn: report
                        .machines
                        .iter()
                        .find(|m| m.role == "sweeper")
                        .and_then(|m| m.arn.clone()),
                    role_arn: role.clone(),
                };
                let s = schedule::deploy(&sch, &desired, args.dry_run).await?;
                if text && !args.dry_run {
                    outln!("schedule {}: {}", s.name, schedule_verb(&s.action));
                }
                Some(s)
            }
            _ => None,
        };
        Ok::<_, crate::error::Error>((report, schedule))
    })?
    .map_err(|e| emulator_hint(e, release, &args.connection).verbose(args.verbose))?;
    let (report, schedule) = report;
    match args.format {
        Format::Text => print_text(&report, schedule.as_ref()),
        Format::Json => outln!(
            "{}",
            json!({
                "report": report,
                "refused": report.refused(),
                "schedule": schedule,
                "sweeperSchedule": if schedule.is_some() { None } else { Some(sweeper_schedule_note(release)) },
            })
        ),
    }
    if report.refused() {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

/// The release's manifest when it is a `--backend lambda-durable` one.
fn durable_manifest(out: &std::path::Path) -> Result<Option<serde_json::Value>, Error> {
    let path = out.join(tpf_sfn_compiler::lowering::manifest::MANIFEST_FILE);
    let Ok(bytes) = crate::input::read(&path) else {
        // Release::load reports the unreadable manifest in its own words.
        return Ok(None);
    };
    let manifest: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(m) => m,
        Err(_) => return Ok(None),
    };
    Ok(crate::aws::durable_deploy::is_durable(&manifest).then_some(manifest))
}

/// moto refuses the `States.Http.*` error names the http binding's Retry and Catch name (it
/// takes any `States.` prefix for a custom error), so the default binding cannot be deployed to
/// it; the hint says so where the refusal is met, instead of a generic one.
pub(crate) fn emulator_hint(e: Error, release: &Release, connection: &Connection) -> Error {
    let refused_definition =
        e.code() == "DEPLOY_INVALID_DEFINITION" || crate::error::chain(&e).contains("States.Http");
    if connection.emulator_endpoint().is_some()
        && release.manifest.binding.kind == "http"
        && e.code().starts_with("DEPLOY_")
        && refused_definition
    {
        return e.with_hint(
            "local emulators such as moto refuse the http binding's `States.Http.*` error names; \
             for a local run compile with `--binding queue` (the relay carries the calls, as \
             `tpf-sfn dev` does), and keep the http binding for AWS",
        );
    }
    e
}

/// Placeholder endpoints and ARNs deploy only to a local emulator: on AWS they would create
/// machines that reach nothing. Checked before any call, so no credentials or network are needed
/// to be told.
fn refuse_placeholders(release: &Release, connection: &Connection) -> CmdResult {
    // Where the calls go decides what is refused: a malformed endpoint first.
    connection.check()?;
    refuse_placeholder_parameters(
        &release.manifest.identity,
        &release.manifest.binding.parameters,
        connection,
    )
}

pub(super) fn refuse_placeholder_parameters(
    identity: &crate::aws::release::Identity,
    parameters: &std::collections::BTreeMap<String, String>,
    connection: &Connection,
) -> CmdResult {
    if connection.emulator_endpoint().is_some() {
        return Ok(());
    }
    let found = placeholder::found(parameters.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if found.is_empty() {
        return Ok(());
    }
    Err(Failure::Input(Diagnostics(
        found
            .into_iter()
            .map(|(key, value)| {
                Diagnostic::error(
                    "DEPLOY_PLACEHOLDER",
                    Location::pointer("tpf-sfn.toml", key),
                    format!(
                        "release {} was compiled with the placeholder `{value}` for `{key}`; on AWS its \
                         machines would reach nothing (only a local emulator endpoint takes placeholders)",
                        identity
                    ),
                )
                .with_hint(format!("{}, then compile again", placeholder::hint(key)))
            })
            .collect(),
    )))
}

fn schedule_verb(a: &schedule::Action) -> String {
    match a {
        schedule::Action::Create => "created".to_string(),
        schedule::Action::Unchanged => "unchanged".to_string(),
        schedule::Action::Update { changes } => format!("updated: {}", changes.join(", ")),
    }
}

fn sweeper_schedule_note(release: &Release) -> String {
    match &release.manifest.machines.sweeper {
        Some(sweeper) => format!(
            "the sweeper's schedule ({}) was not deployed: pass --schedule-role-arn, or use `compile --emit cloudformation|terraform`",
            sweeper.schedule.as_deref().unwrap_or("-")
        ),
        None => "the release has no sweeper: its driver sweeps TPF itself (gateway binding)".to_owned(),
    }
}

fn print_text(report: &Report, schedule: Option<&schedule::Report>) {
    let verb = if report.dry_run { "plan" } else { "deploy" };
    outln!("{verb}: {}", report.identity);
    for m in &report.machines {
        let what = format!("{} {}", m.role, m.name);
        match &m.action {
            Action::Create if report.dry_run => outln!("  create: {what}"),
            Action::Create => {}
            Action::Unchanged => outln!("  unchanged: {what} (no write calls)"),
            Action::Update { tags, settings } => {
                let head = if report.dry_run { "update" } else { "updated" };
                let mut parts = settings.clone();
                if !tags.is_empty() {
                    parts.push(format!("tags {}", tags.join(", ")));
                }
                outln!("  {head}: {what}: {}", parts.join("; "));
            }
            Action::Refuse { diff } => {
                outln!(
                    "  refuse: {what}: the deployed definition differs, and executions pinned to release {} would mix definitions",
                    report.identity.release_version
                );
                for line in diff {
                    outln!("      {line}");
                }
            }
            Action::Replace { diff, .. } => {
                let head = if report.dry_run {
                    "replace"
                } else {
                    "replaced"
                };
                outln!("  {head}: {what} (--force-replace)");
                for line in diff {
                    outln!("      {line}");
                }
                if m.running_executions.is_empty() {
                    outln!("  warning: no RUNNING executions");
                } else {
                    outln!(
                        "  warning: {} RUNNING execution(s) keep the old definition; generations they start get the new one: {}",
                        m.running_executions.len(),
                        m.running_executions.join(", ")
                    );
                }
            }
        }
    }
    if let Some(s) = schedule {
        match &s.action {
            schedule::Action::Unchanged => {
                outln!("  unchanged: schedule {} (no write calls)", s.name)
            }
            schedule::Action::Create if report.dry_run => {
                outln!("  create: schedule {} ({})", s.name, s.expression)
            }
            schedule::Action::Update { changes } if report.dry_run => {
                outln!("  update: schedule {}: {}", s.name, changes.join(", "))
            }
            _ => {}
        }
    }
    let writes = report.write_calls + schedule.map_or(0, |s| s.write_calls);
    if report.refused() {
        let refusal = crate::error::Error::new(
            "DEPLOY_DEFINITION_CHANGED",
            "refused: a release's definition is never changed in place",
        )
        .with_hint("bump the release version (a new machine), or pass --force-replace if the change is known to be compatible");
        outln!("{}", refusal.report());
    } else if report.dry_run {
        outln!("dry run: no write calls");
    } else if writes == 0 {
        outln!("unchanged: {} (no write calls)", report.identity);
    } else {
        outln!("done: {writes} write call(s)");
    }
    if schedule.is_none() && !report.refused() {
        outln!("  note: the sweeper's schedule was not deployed: pass --schedule-role-arn, or use `compile --emit cloudformation|terraform`");
    }
}
