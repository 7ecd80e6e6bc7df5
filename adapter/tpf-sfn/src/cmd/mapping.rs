//! `tpf-sfn mapping-test` (the CI gate) and `tpf-sfn simulate` (one scenario, readable).

use crate::stdio::{out, outln};
use std::path::Path;

use serde_json::json;
use tpf_sfn_compiler::bundled::{
    RESTAURANT_CONTRACT, RESTAURANT_CONTRACT_FILE, RESTAURANT_RELEASE, RESTAURANT_RELEASE_FILE,
};
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_mapping::harness::trace::clock;
use tpf_sfn_mapping::invariants::CHECKS;
use tpf_sfn_mapping::proof::{self, BackendProof, ScenarioReport};
use tpf_sfn_mapping::scenario::{matrix, Scenario};

use super::inputs::InputFiles;
use crate::backend::{self, CliBackend, ForBackend};
use crate::cli::{Format, MappingTestArgs, SimulateArgs};
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use crate::input::read;
use crate::{output, report};

pub fn mapping_test(args: &MappingTestArgs) -> CmdResult {
    if args.check && args.snapshots.is_none() {
        return Err(Error::new("USAGE", "--check needs --snapshots DIR")
            .with_hint("pass the directory your trace snapshots are committed in")
            .into());
    }
    backend::dispatch(args.backend, MappingTest(args))
}

/// `mapping-test` on one backend: its program on its engine, over the derived matrix, with
/// every invariant of the one table and the same report.
struct MappingTest<'a>(&'a MappingTestArgs);

impl ForBackend for MappingTest<'_> {
    type Output = CmdResult;

    fn run<B: CliBackend>(self) -> CmdResult {
        let args = self.0;
        B::check_usage(args)?;
        let files = InputFiles::read(&args.contract, args.release.as_ref(), args.config.as_ref())?;
        let input = files.input(args.binding, args.allow_unverified_hash);
        if let Some(done) = super::gateway_world::mapping_test::<B>(args, &input) {
            return done;
        }
        let replacement = B::replacement(args)?;
        let subject = match proof::subject::<B::Proof>(&input, replacement) {
            Ok(s) => s,
            Err(d) => {
                report::diagnostics(args.format, &d.0);
                return Err(Failure::Input(Default::default()));
            }
        };
        let extra = match &args.scenarios {
            Some(dir) => load_scenarios(dir)?,
            None => Vec::new(),
        };
        let scenarios = proof::scenarios(&subject, extra);
        let reports = proof::prove(&subject, &scenarios, proof::SEED);

        let snapshot_files: Vec<(String, String)> = reports
            .iter()
            .map(|r| (proof::snapshot_file(&r.name), r.snapshot()))
            .collect();
        let drift = match (&args.snapshots, args.check) {
            (Some(dir), true) => output::check(dir, &snapshot_files),
            (Some(dir), false) => {
                output::write_all(dir, &snapshot_files)?;
                Vec::new()
            }
            (None, _) => Vec::new(),
        };
        let failed = reports.iter().filter(|r| !r.passed()).count();
        let coverage = matrix::coverage(&subject);
        let id = &subject.plan.identity;
        let binding = subject.plan.binding.kind().as_str();

        match args.format {
            Format::Text => {
                outln!(
                    "mapping-test {} (release {}, binding {binding}, {})",
                    id.pipeline_id,
                    id.release_version,
                    B::program_label(args)
                );
                for r in &reports {
                    print_report::<B>(r);
                }
                print_drift(&drift);
                let stopped = matches!(reports.as_slice(), [r] if r.name == proof::STATIC_CHECKS);
                if stopped {
                    outln!(
                        "the static checks rejected {}: no scenario ran",
                        B::STATICALLY_JUDGED
                    );
                } else {
                    print_coverage(&coverage);
                    outln!(
                        "{} scenarios × {} invariant checks: {} passed, {} failed{}",
                        reports.len(),
                        CHECKS.len(),
                        reports.len() - failed,
                        failed,
                        if drift.is_empty() {
                            String::new()
                        } else {
                            format!(", {} snapshot(s) drifted", drift.len())
                        }
                    );
                }
            }
            Format::Json => {
                let mut out = serde_json::Map::new();
                out.insert(
                    "identity".into(),
                    json!({
                        "pipelineId": id.pipeline_id,
                        "releaseVersion": id.release_version,
                    }),
                );
                out.insert("binding".into(), json!(binding));
                if B::JSON_NAMES_BACKEND {
                    out.insert("backend".into(), json!(B::Proof::BACKEND.as_str()));
                }
                out.insert("scenarios".into(), json!(reports));
                out.insert("perAwaitFamilies".into(), json!(coverage));
                out.insert(
                    "tpfConformance".into(),
                    tpf_sfn_mapping::gateway::catalogue::conformance_json(),
                );
                out.insert("passed".into(), json!(failed == 0 && drift.is_empty()));
                out.insert(
                    "snapshotDrift".into(),
                    json!(drift.iter().map(|d| &d.file).collect::<Vec<_>>()),
                );
                outln!("{}", serde_json::Value::Object(out));
            }
        }
        if failed == 0 && drift.is_empty() {
            Ok(())
        } else {
            Err(Failure::Findings)
        }
    }
}

fn print_drift(drift: &[output::Drift]) {
    for d in drift {
        if d.missing {
            outln!("  snapshot missing: {}", d.file);
        } else if d.stale {
            outln!("  snapshot stale: {} (no scenario produces it now)", d.file);
        } else {
            outln!("  snapshot differs: {}\n{}", d.file, d.diff);
        }
    }
}

/// Says which awaits the per-await families ran on and how many each stands for, so a matrix
/// that skips interchangeable awaits says so.
fn print_coverage(c: &matrix::Coverage) {
    if c.classes.awaits == 0 {
        return;
    }
    outln!(
        "  per-await families ran on {} of {} await(s), one per class of identical await states plus the first and last ({} class(es)); the whole-pipeline scenarios visit and route every await",
        c.classes.representatives.len(),
        c.classes.awaits,
        c.classes.classes.len()
    );
    for f in &c.families {
        outln!(
            "    {}: covers {} await(s), ran on {}",
            f.family,
            f.awaits_covered,
            f.ran_on.join(", ")
        );
    }
}

fn print_report<B: CliBackend>(r: &ScenarioReport) {
    let m = &r.metrics;
    let mark = if r.passed() { "ok  " } else { "FAIL" };
    outln!(
        "  {mark} {:<58} {} {:>4} calls {:>2} gen  {}",
        r.name,
        B::report_figures(m),
        m.action_calls,
        m.generations,
        clock((m.simulated_seconds * 1000.0) as i64)
    );
    if let Some(e) = &r.error {
        outln!("       could not run: {e}");
    }
    for u in &r.unmet_expectations {
        outln!("       expectation: {u}");
    }
    for v in &r.violations {
        outln!("       {}", v.to_string().replace('\n', "\n       "));
    }
}

/// The hand-written scenarios of `mapping-tests/scenarios/`, written for the bundled restaurant
/// sample and compiled in with it (`bundled_scenarios_are_the_scenario_directory` keeps the list
/// equal to the directory).
pub const BUNDLED_SCENARIOS: &[(&str, &str)] = &[
    (
        "flaky-network.toml",
        include_str!("../../../../mapping-tests/scenarios/flaky-network.toml"),
    ),
    (
        "late-decision-then-redrive.toml",
        include_str!("../../../../mapping-tests/scenarios/late-decision-then-redrive.toml"),
    ),
    (
        "slow-reviewer.toml",
        include_str!("../../../../mapping-tests/scenarios/slow-reviewer.toml"),
    ),
];

fn bundled_scenarios() -> Result<Vec<Scenario>, Failure> {
    BUNDLED_SCENARIOS
        .iter()
        .map(|(file, text)| parse_scenario(&format!("{file} (bundled)"), text))
        .collect()
}

fn parse_scenario(file: &str, text: &str) -> Result<Scenario, Failure> {
    Scenario::from_toml(text).map_err(|e| {
        Error::new("SCENARIO_INVALID", format!("{file}: {e}"))
            .with_hint("see mapping-tests/scenarios/ for the format")
            .into()
    })
}

/// The rendered trace as a list of events: one per line, with its time since the scenario
/// started, who acted (`driver`, `sweeper`, `call`, `tpf`, `bridge`, `actor`) and what happened.
pub fn trace_events(trace: &str) -> Vec<serde_json::Value> {
    trace
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (at, rest) = line.split_once(' ').unwrap_or((line, ""));
            let rest = rest.trim_start();
            let (source, text) = rest.split_once(' ').unwrap_or((rest, ""));
            json!({
                "at": at,
                "atMs": clock_ms(at),
                "source": source,
                "text": text.trim_start(),
            })
        })
        .collect()
}

/// `+HH:MM:SS.mmm` back to milliseconds; `None` for anything else.
fn clock_ms(at: &str) -> Option<i64> {
    let (hms, ms) = at.strip_prefix('+')?.split_once('.')?;
    let mut parts = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
    Some(((h * 60 + m) * 60 + s) * 1000 + ms.parse::<i64>().ok()?)
}

fn load_scenarios(dir: &Path) -> Result<Vec<Scenario>, Failure> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::new("IO_READ", format!("cannot list {}", dir.display()))
            .with_source(e)
            .with_hint("check that the directory exists and is readable")
    })?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = String::from_utf8(read(&p)?).map_err(|e| {
            Error::new("SCENARIO_ENCODING", format!("{} is not UTF-8", p.display()))
                .with_source(e)
                .with_hint("save the scenario as UTF-8")
        })?;
        out.push(parse_scenario(&p.display().to_string(), &text)?);
    }
    Ok(out)
}

pub fn simulate(args: &SimulateArgs) -> CmdResult {
    let files = match &args.contract {
        Some(c) => InputFiles::read(c, args.release.as_ref(), args.config.as_ref())?,
        None => {
            let mut f = InputFiles {
                contract_file: format!("{RESTAURANT_CONTRACT_FILE} (bundled)"),
                contract: RESTAURANT_CONTRACT.to_vec(),
                release: Some((
                    format!("{RESTAURANT_RELEASE_FILE} (bundled)"),
                    RESTAURANT_RELEASE.to_vec(),
                )),
                config: None,
            };
            if let Some(p) = super::inputs::config_path(args.config.as_ref()) {
                f.config = Some(super::inputs::read_config(&p)?);
            }
            f
        }
    };
    let input = files.input(args.binding, args.allow_unverified_hash);
    // The bundled sample comes with its hand-written scenarios; a user's contract with theirs.
    let extra = match (&args.scenarios, &args.contract) {
        (Some(dir), _) => load_scenarios(dir)?,
        (None, None) => bundled_scenarios()?,
        (None, Some(_)) => Vec::new(),
    };
    backend::dispatch(
        args.backend,
        Simulate {
            args,
            input: &input,
            extra,
        },
    )
}

/// `simulate` on one backend: one scenario of its matrix, with its trace and figures.
struct Simulate<'a> {
    args: &'a SimulateArgs,
    input: &'a Input<'a>,
    extra: Vec<Scenario>,
}

impl ForBackend for Simulate<'_> {
    type Output = CmdResult;

    fn run<B: CliBackend>(self) -> CmdResult {
        let args = self.args;
        if let Some(done) = super::gateway_world::simulate::<B>(args, self.input) {
            return done;
        }
        let subject = match proof::subject::<B::Proof>(self.input, None) {
            Ok(s) => s,
            Err(d) => {
                report::diagnostics(args.format, &d.0);
                return Err(Failure::Input(Default::default()));
            }
        };
        let all = proof::scenarios(&subject, self.extra);
        if args.list {
            match args.format {
                Format::Text => {
                    for s in &all {
                        outln!("{:<58} {}", s.name, s.description);
                    }
                }
                Format::Json => outln!(
                    "{}",
                    json!({
                        "scenarios": all
                            .iter()
                            .map(|s| json!({"name": s.name, "description": s.description}))
                            .collect::<Vec<_>>()
                    })
                ),
            }
            return Ok(());
        }
        let scenario =
            super::scenario_name::find(&all, args.scenario.as_deref().unwrap_or("happy-path"))?;
        let r = proof::run_one(&subject, scenario, proof::SEED);
        match args.format {
            Format::Text => {
                outln!("scenario {}: {}", r.name, r.description);
                let m = &r.metrics;
                let simulated = clock((m.simulated_seconds * 1000.0) as i64);
                outln!(
                    "{} · binding {} · pinned release {}\n",
                    B::runs_on(&subject),
                    subject.plan.binding.kind().as_str(),
                    subject.plan.identity.release_version
                );
                out!("{}", r.trace);
                outln!("\n{}", B::totals(m, &simulated));
                if r.passed() {
                    outln!("all {} invariant checks hold", CHECKS.len());
                }
                for v in &r.violations {
                    outln!("{v}");
                }
                for u in &r.unmet_expectations {
                    outln!("expectation not met: {u}");
                }
            }
            Format::Json => outln!(
                "{}",
                json!({ "scenario": r, "trace": trace_events(&r.trace) })
            ),
        }
        if r.passed() {
            Ok(())
        } else {
            Err(Failure::Findings)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_scenarios_are_the_scenario_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mapping-tests/scenarios");
        let mut on_disk: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        on_disk.sort();
        let bundled: Vec<(String, String)> = BUNDLED_SCENARIOS
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect();
        assert_eq!(bundled, on_disk);
        assert_eq!(bundled_scenarios().unwrap().len(), on_disk.len());
    }

    #[test]
    fn a_trace_becomes_one_event_per_line() {
        let events = trace_events(
            "+00:00:00.000 driver  exec-1                 → Ask TPF\n+01:02:03.004 tpf     exec-1 v2 RUNNING\n",
        );
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["source"], "driver");
        assert_eq!(events[0]["text"], "exec-1                 → Ask TPF");
        assert_eq!(events[1]["atMs"], 3_723_004);
        assert_eq!(events[1]["source"], "tpf");
    }
}
