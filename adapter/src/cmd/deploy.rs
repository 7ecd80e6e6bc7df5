//! `tpf-sfn deploy`.

use serde_json::json;

use crate::aws::deploy::{self, Options, Report};
use crate::aws::plan::Action;
use crate::aws::release::Release;
use crate::cli::{DeployArgs, Format};
use crate::exit::{CmdResult, Failure};

pub fn run(args: &DeployArgs) -> CmdResult {
    let release = Release::load(&args.out).map_err(|e| Failure::Io(e.to_string()))?;
    let opts = Options {
        role_arn: args.role_arn.as_deref(),
        dry_run: args.dry_run,
        force_replace: args.force_replace,
    };
    let text = args.format == Format::Text;
    let report = crate::aws::block_on(async {
        let conf = args.connection.load().await;
        let sfn = aws_sdk_sfn::Client::new(&conf);
        let mut progress = |line: String| {
            if text {
                println!("{line}");
            }
        };
        deploy::deploy(&sfn, &release, opts, &mut progress).await
    })?
    .map_err(|e| Failure::Aws(e.to_string()))?;
    match args.format {
        Format::Text => print_text(&report),
        Format::Json => println!(
            "{}",
            json!({
                "report": report,
                "refused": report.refused(),
                "sweeperSchedule": sweeper_schedule_note(&release),
            })
        ),
    }
    if report.refused() {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

fn sweeper_schedule_note(release: &Release) -> String {
    format!(
        "deploy does not create the sweeper's schedule ({}); `compile --emit cloudformation|terraform` exports it",
        release.manifest.machines.sweeper.schedule.as_deref().unwrap_or("-")
    )
}

fn print_text(report: &Report) {
    let verb = if report.dry_run { "plan" } else { "deploy" };
    println!("{verb}: {}", report.identity);
    for m in &report.machines {
        let what = format!("{} {}", m.role, m.name);
        match &m.action {
            Action::Create if report.dry_run => println!("  create: {what}"),
            Action::Create => {}
            Action::Unchanged => println!("  unchanged: {what} (no write calls)"),
            Action::Update { tags, settings } => {
                let head = if report.dry_run { "update" } else { "updated" };
                let mut parts = settings.clone();
                if !tags.is_empty() {
                    parts.push(format!("tags {}", tags.join(", ")));
                }
                println!("  {head}: {what}: {}", parts.join("; "));
            }
            Action::Refuse { diff } => {
                println!(
                    "  refuse: {what}: the deployed definition differs, and executions pinned to release {} would mix definitions",
                    report.identity.release_version
                );
                for line in diff {
                    println!("      {line}");
                }
            }
            Action::Replace { diff, .. } => {
                let head = if report.dry_run {
                    "replace"
                } else {
                    "replaced"
                };
                println!("  {head}: {what} (--force-replace)");
                for line in diff {
                    println!("      {line}");
                }
                if m.running_executions.is_empty() {
                    println!("  warning: no RUNNING executions");
                } else {
                    println!(
                        "  warning: {} RUNNING execution(s) keep the old definition; generations they start get the new one: {}",
                        m.running_executions.len(),
                        m.running_executions.join(", ")
                    );
                }
            }
        }
    }
    if report.refused() {
        println!(
            "error[DEPLOY_DEFINITION_CHANGED]: refused: a release's definition is never changed in place\n  hint: bump the release version (a new machine), or pass --force-replace if the change is known to be compatible"
        );
    } else if report.dry_run {
        println!("dry run: no write calls");
    } else if report.write_calls == 0 {
        println!("unchanged: {} (no write calls)", report.identity);
    } else {
        println!("done: {} write call(s)", report.write_calls);
        println!("  note: the sweeper's schedule is not created by deploy; `compile --emit cloudformation|terraform` exports it");
    }
}
