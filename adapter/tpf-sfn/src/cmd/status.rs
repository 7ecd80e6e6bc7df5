//! `tpf-sfn status`.

use crate::stdio::outln;
use serde_json::json;

use crate::aws::status::{self, Query, Report, Target};
use crate::cli::{Format, StatusArgs};
use crate::exit::{CmdResult, Failure};

pub fn run(args: &StatusArgs) -> CmdResult {
    let target = Target::read(&args.out)?;
    let names = crate::cmd::tables::table_names(&args.tables)?;
    let local = args.connection.emulator_endpoint();
    let report = crate::aws::block_on(async {
        let conf = args.connection.load().await?;
        let region = conf
            .region()
            .map(|r| r.as_ref().to_string())
            .unwrap_or_else(|| "us-east-1".to_string());
        let sfn = aws_sdk_sfn::Client::new(&conf);
        let ddb = aws_sdk_dynamodb::Client::new(&conf);
        let lambda = aws_sdk_lambda::Client::new(&conf);
        let q = Query {
            target: &target,
            tenant: &args.tenant,
            execution: &args.execution,
            execution_table: &names.execution,
            console_region: local.is_none().then_some(region.as_str()),
        };
        status::status(&sfn, &lambda, &ddb, &q).await
    })??;
    match args.format {
        Format::Text => print_text(&report),
        Format::Json => outln!("{}", json!(report)),
    }
    if report.verdict.diverged {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

fn print_text(r: &Report) {
    outln!("execution {}/{}", r.tenant, r.execution);
    match &r.record {
        Some(rec) => {
            outln!(
                "  TPF       {} (record version {})",
                rec.status,
                rec.version
            );
            outln!(
                "  step      {}  attempt {}",
                rec.current_step_index,
                rec.attempt
            );
            if let Some(u) = &rec.await_unit_id {
                outln!("  await     unit {u}");
            }
            // TPF keeps an await's deadline on its interaction, not on the execution record.
            // A finished execution is due for nothing: no line at all.
            if !rec.terminal {
                outln!(
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
                outln!("  error     {code}");
            }
            outln!("  pinned    {}", rec.identity);
        }
        None => outln!("  TPF       no record"),
    }
    outln!(
        "  driver    {} ({})",
        r.driver,
        if r.driver_arn.is_some() {
            "deployed"
        } else {
            "not deployed"
        }
    );
    if r.generations.is_empty() {
        outln!("  drivers   none");
    }
    for g in &r.generations {
        outln!(
            "  generation {}  {}{}{}",
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
        outln!("            started {}", g.started);
        match &g.console_url {
            Some(url) => outln!("            {url}"),
            None => outln!("            (a local emulator's execution: in no AWS console)"),
        }
    }
    let v = &r.verdict;
    if v.diverged {
        outln!("diverged[{}]: {}", v.code, v.summary);
        if let Some(fix) = &v.fix {
            outln!("  fix: {fix}");
        }
    } else {
        outln!("consistent: {}", v.summary);
    }
}
