//! `mapping-test` and `simulate`: the user's compiled gateway driver (Step Functions, or Lambda
//! durable functions) in the gateway world, against the catalogue named by TPF's conformance
//! scenarios, every scenario's pipeline given the user's contract's await deadline. Another
//! binding is Action API v1's, retired: the compiler refuses it (`ACTION_API_V1_RETIRED`).

use std::path::PathBuf;

use serde_json::json;
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_mapping::gateway::catalogue::{ScenarioInfo, CATALOGUE};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::engine::EngineError;
use tpf_sfn_mapping::gateway::scenarios::ScenarioReport;
use tpf_sfn_mapping::gateway::trace::clock;
use tpf_sfn_mapping::gateway::trace::Trace;
use tpf_sfn_mapping::gateway::world::T0;
use tpf_sfn_mapping::sfn::gateway_proof::{self, GatewaySubject, Verdict};
use tpf_sfn_mapping::sfn::DriverFile;

use crate::backend::CliBackend;
use crate::cli::{Format, MappingTestArgs, SimulateArgs};
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use crate::input::read;
use crate::report;
use crate::stdio::outln;

/// The gateway subject of `input` on backend `B`; an input that does not compile (an Action API
/// v1 binding among them) gets its diagnostics.
fn subject<B: CliBackend>(
    input: &Input,
    driver: Option<&PathBuf>,
    format: Format,
) -> Result<GatewaySubject, Failure> {
    B::check_usage(driver.map(PathBuf::as_path))?;
    let driver = match driver {
        Some(p) => Some(DriverFile {
            file: p.display().to_string(),
            bytes: read(p)?,
        }),
        None => None,
    };
    match B::gateway_subject(input, driver)? {
        Ok(s) => Ok(s),
        Err(d) => {
            report::diagnostics(format, &d.0);
            Err(Failure::Input(Default::default()))
        }
    }
}

fn unrunnable(e: EngineError) -> Failure {
    Error::new(
        "GATEWAY_DRIVER_UNRUNNABLE",
        "the Step Functions engine cannot run the gateway driver",
    )
    .with_source(e)
    .with_hint("run `tpf-sfn validate` on the driver; a compiled one always runs")
    .into()
}

/// `mapping-test`: the gateway world's catalogue on the user's driver.
pub fn mapping_test<B: CliBackend>(args: &MappingTestArgs, input: &Input) -> CmdResult {
    let s = subject::<B>(input, args.driver.as_ref(), args.format)?;
    run_catalogue::<B>(args, &s)
}

fn run_catalogue<B: CliBackend>(args: &MappingTestArgs, s: &GatewaySubject) -> CmdResult {
    let reports = s.run_catalogue().map_err(unrunnable)?;
    let verdicts: Vec<(&ScenarioReport, Verdict)> =
        reports.iter().map(|r| (r, s.verdict(r))).collect();
    let count = |f: fn(&Verdict) -> bool| verdicts.iter().filter(|(_, v)| f(v)).count();
    let failed = count(|v| matches!(v, Verdict::Failed { .. }));
    let known = count(|v| matches!(v, Verdict::KnownFailure { .. }));
    let driver = args
        .driver
        .as_ref()
        .map_or("compiled".to_string(), |p| p.display().to_string());
    match args.format {
        Format::Text => {
            outln!(
                "mapping-test {} (release {}, binding gateway, driver {driver}, transport {}, await deadline {} s)",
                s.identity.pipeline_id,
                s.identity.release_version,
                s.transport,
                s.await_timeout_ms / 1000
            );
            for (r, v) in &verdicts {
                print_verdict(r.name, v);
            }
            outln!(
                "{} scenarios of the gateway world × {} checks: {} passed, {} known failure(s), {} failed",
                verdicts.len(),
                GatewayCheck::ALL.len(),
                verdicts.len() - failed - known,
                known,
                failed
            );
        }
        Format::Json => outln!(
            "{}",
            json!({
                "identity": {
                    "pipelineId": s.identity.pipeline_id,
                    "releaseVersion": s.identity.release_version,
                },
                "binding": "gateway",
                "backend": B::NAME.as_str(),
                "transport": s.transport,
                "awaitTimeoutSeconds": s.await_timeout_ms / 1000,
                "scenarios": verdicts
                    .iter()
                    .map(|(r, v)| json!({ "name": r.name, "result": v }))
                    .collect::<Vec<_>>(),
                "checks": GatewayCheck::ALL
                    .iter()
                    .map(|c| json!({ "name": c.name(), "invariant": c.invariant() }))
                    .collect::<Vec<_>>(),
                "tpfConformance": gateway_proof::conformance_json_by(&reports, |r| s.verdict(r)),
                "passed": failed == 0,
            })
        ),
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(Failure::Findings)
    }
}

fn print_verdict(name: &str, v: &Verdict) {
    match v {
        Verdict::Passed => outln!("  ok    {name}"),
        Verdict::KnownFailure { reason } => outln!("  known {name}: {reason}"),
        Verdict::Failed { checks, assertion } => {
            outln!("  FAIL  {name}");
            for c in checks {
                outln!("        broke {c}");
            }
            if let Some(a) = assertion {
                outln!("        assertion: {a}");
            }
        }
    }
}

/// The scenario `simulate` runs without `--scenario`: TPF's await path (submit, poll, park on
/// the callback binding, the wake-up, the result), the gateway world's happy path.
pub const DEFAULT_SCENARIO: &str = "tpf-11-completion-after-binding";

/// `simulate`: one scenario of the gateway world on the user's driver.
pub fn simulate<B: CliBackend>(args: &SimulateArgs, input: &Input) -> CmdResult {
    let s = subject::<B>(input, None, args.format)?;
    simulate_one(args, &s)
}

fn simulate_one(args: &SimulateArgs, s: &GatewaySubject) -> CmdResult {
    let runnable = || CATALOGUE.iter().filter(|i| i.runs);
    if args.list {
        match args.format {
            Format::Text => {
                for i in runnable() {
                    outln!("{:<58} {}", i.name, i.title);
                }
            }
            Format::Json => outln!(
                "{}",
                json!({
                    "scenarios": runnable()
                        .map(|i| json!({"name": i.name, "description": i.title}))
                        .collect::<Vec<_>>()
                })
            ),
        }
        return Ok(());
    }
    let all: Vec<&'static ScenarioInfo> = runnable().collect();
    let name = args.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO);
    let info = *super::scenario_name::find_by(&all, |i| i.name, name)?;
    let (r, trace) = s.run_one(info).map_err(unrunnable)?;
    let v = s.verdict(&r);
    let summary = summary(&trace);
    match args.format {
        Format::Text => {
            outln!("scenario {}: {}", info.name, info.title);
            outln!(
                "driver {} · binding gateway ({}) · await deadline {} s\n",
                s.machine_name,
                s.transport,
                s.await_timeout_ms / 1000
            );
            for line in &summary {
                outln!("{line}");
            }
            outln!();
            print_verdict(info.name, &v);
        }
        Format::Json => outln!(
            "{}",
            json!({ "scenario": info.name, "result": v, "trace": summary })
        ),
    }
    if matches!(v, Verdict::Failed { .. }) {
        Err(Failure::Findings)
    } else {
        Ok(())
    }
}

/// The trace's events in time order, one line each: generations started, gateway calls,
/// callback sends, reconciler decisions, the wake-path stack's scheduled sweeps and, where the
/// steps run remotely, the transition worker's requests.
fn summary(t: &Trace) -> Vec<String> {
    let mut lines: Vec<(i64, String)> = Vec::new();
    for s in &t.starts {
        let outcome = match &s.outcome {
            Ok(_) => "started".to_string(),
            Err(e) => format!("refused: {e}"),
        };
        lines.push((
            s.at_ms,
            format!("start   {} via {:?}: {outcome}", s.name, s.via),
        ));
    }
    for i in &t.invocations {
        let op = i
            .operation
            .map_or_else(|| "unreadable".to_string(), |o| format!("{o:?}"));
        let answer = match &i.answer {
            Ok(_) => "answered".to_string(),
            Err(e) => format!("failed: {e:?}"),
        };
        lines.push((i.at_ms, format!("gateway {op}: {answer}")));
    }
    for s in &t.sends {
        lines.push((
            s.at_ms,
            format!(
                "wake-up send to generation {} of {}: {:?}",
                s.generation, s.execution_id, s.result
            ),
        ));
    }
    for r in &t.reconciles {
        lines.push((r.at_ms, format!("reconciler {}", r.decision)));
    }
    for w in &t.scheduled_sweeps {
        let answer = match &w.answer {
            Ok(_) => "answered".to_string(),
            Err(e) => format!("failed: {e}"),
        };
        lines.push((w.at_ms, format!("schedule Sweep: {answer}")));
    }
    for e in &t.transitions {
        lines.push((
            e.at_ms,
            format!("transition request {}: {}", e.request_id, e.what),
        ));
    }
    lines.sort_by_key(|(at, _)| *at);
    lines
        .into_iter()
        .map(|(at, text)| format!("{} {text}", clock(at - T0)))
        .collect()
}
