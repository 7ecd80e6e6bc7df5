//! `tpf-sfn status`.

use serde_json::json;

use crate::aws::release::Release;
use crate::aws::status::{self, Query, Report};
use crate::cli::{Format, StatusArgs};
use crate::exit::{CmdResult, Failure};

pub fn run(args: &StatusArgs) -> CmdResult {
    let manifest = Release::manifest(&args.out)?;
    let (names, wakeup_given) = crate::cmd::tables::overrides(&args.tables)?;
    let wakeup_table = if wakeup_given {
        names.wakeup.clone()
    } else {
        manifest.wakeup_table.clone()
    };
    let report = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        let region = conf
            .region()
            .map(|r| r.as_ref().to_string())
            .unwrap_or_else(|| "us-east-1".to_string());
        let sfn = aws_sdk_sfn::Client::new(&conf);
        let ddb = aws_sdk_dynamodb::Client::new(&conf);
        let q = Query {
            manifest: &manifest,
            tenant: &args.tenant,
            execution: &args.execution,
            execution_table: &names.execution,
            wakeup_table: &wakeup_table,
            region: &region,
        };
        status::status(&sfn, &ddb, &q).await
    })??;
    match args.format {
        Format::Text => print_text(&report),
        Format::Json => println!("{}", json!(report)),
    }
    if report.verdict.diverged {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

fn print_text(r: &Report) {
    println!("execution {}/{}", r.tenant, r.execution);
    match &r.record {
        Some(rec) => {
            println!(
                "  TPF       {} (record version {})",
                rec.status, rec.version
            );
            println!(
                "  step      {}  attempt {}",
                rec.current_step_index, rec.attempt
            );
            if let Some(u) = &rec.await_unit_id {
                println!("  await     unit {u}");
            }
            // TPF keeps an await's deadline on its interaction, not on the execution record.
            // A finished execution is due for nothing: no line at all.
            if !rec.terminal {
                println!(
                    "  next due  {}",
                    rec.next_due
                        .as_deref()
                        .unwrap_or(if rec.await_unit_id.is_some() {
                            "none: parked until the await completes or its deadline passes"
                        } else {
                            "none"
                        })
                );
            }
            if let Some(code) = &rec.error_code {
                println!("  error     {code}");
            }
            println!("  pinned    {}", rec.identity);
        }
        None => println!("  TPF       no record"),
    }
    println!(
        "  machine   {} ({})",
        r.driver_machine,
        if r.driver_machine_arn.is_some() {
            "deployed"
        } else {
            "not deployed"
        }
    );
    if r.generations.is_empty() {
        println!("  drivers   none");
    }
    for g in &r.generations {
        println!(
            "  driver    {}  {}{}{}",
            g.name,
            g.status,
            g.current_state
                .as_deref()
                .map(|s| format!("  at \"{s}\""))
                .unwrap_or_default(),
            g.error
                .as_deref()
                .map(|e| format!("  error {e}"))
                .unwrap_or_default()
        );
        println!("            started {}", g.started);
        println!("            {}", g.console_url);
    }
    if let Some(p) = &r.wakeup_pointer {
        println!(
            "  pointer   generation {} {}",
            p.generation.as_deref().unwrap_or("?"),
            p.execution_arn.as_deref().unwrap_or("?")
        );
    }
    let v = &r.verdict;
    if v.diverged {
        println!("diverged[{}]: {}", v.code, v.summary);
        if let Some(fix) = &v.fix {
            println!("  fix: {fix}");
        }
    } else {
        println!("consistent: {}", v.summary);
    }
}
