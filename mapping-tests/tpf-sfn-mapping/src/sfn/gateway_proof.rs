//! The gateway binding's proof, as `mapping-test` and `simulate` run it: the user's compiled
//! driver in the gateway world (the Step Functions machine on the ASL interpreter, or the Lambda
//! durable functions driver on the replay engine), every scenario's pipeline given the user's
//! contract's await deadline, so that the deadline scenarios meet the driver as compiled.

use serde::Serialize;
use tpf_durable_driver::GatewayRun;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::diagnostic::{Diagnostic, Diagnostics, Location};
use tpf_sfn_compiler::durable::LambdaDurable;
use tpf_sfn_compiler::plan::GatewayPlan;
use tpf_sfn_compiler::sfn::asl::{self, StateMachine};
use tpf_sfn_compiler::sfn::gateway::park_timeout_seconds;
use tpf_sfn_compiler::sfn::StepFunctions;
use tpf_wire::Identity;

use super::gateway::GatewayFunctions;
use super::gateway_engine::SfnGatewayEngine;
use super::DriverFile;
use crate::durable::gateway_engine::DurableGatewayEngine;
use crate::gateway::catalogue::{self, ScenarioInfo, FINDINGS};
use crate::gateway::engine::{EngineError, GatewayEngine};
use crate::gateway::scenarios::{run_in, setup_for, try_run_catalogue, ScenarioReport};
use crate::gateway::trace::Trace;
use crate::gateway::world::{gateway_version_arn, Setup, GATEWAY_FUNCTION, T0};

/// The world's starter function, which a driver invokes to start its next generation.
pub const STARTER: &str = "arn:aws:lambda:us-east-1:000000000000:function:tpf-sfn-starter";

/// The second a compiled driver parks beyond the longest await deadline, so that TPF's own
/// deadline has passed when the driver sweeps.
const PARK_GRACE_SECONDS: u64 = 1;

/// TPF's scenarios whose own expectation is the durable submitter's: a failed
/// REGISTER_CALLBACK retried under the same callback id in the same generation. A retried Step
/// Functions task has a new task token, so the gateway driver hands over instead and the next
/// generation registers (`docs/runtime.md`). They break no invariant; their scenario's
/// expectation names the difference.
pub const SUBMITTER_RETRY: [(&str, &str); 2] = [
    (
        "tpf-08-submitter-failure-before-binding",
        "generation 1 registers",
    ),
    (
        "tpf-09-binding-before-submitter-checkpoint",
        "bindingCreated",
    ),
];

/// The engine a gateway subject runs on, with its compiled driver.
#[derive(Debug, Clone)]
pub enum GatewayDriver {
    /// The compiled (or brought) state machine, its function addresses the world's, and the
    /// history events one generation was proven to stay under (the config's
    /// `history.event-budget`).
    StepFunctions {
        driver: Box<StateMachine>,
        event_budget: u32,
        /// The wake-path stack's scheduled sweep the driver was compiled for (its period).
        scheduled_sweep_seconds: Option<u64>,
    },
    /// The durable gateway driver program, with its park timeout's base and the deployment's
    /// scheduled sweep it was compiled for (its period).
    LambdaDurable {
        longest_await_seconds: u64,
        scheduled_sweep_seconds: Option<u64>,
    },
}

/// The user's gateway driver, placed in the world.
#[derive(Debug, Clone)]
pub struct GatewaySubject {
    pub identity: Identity,
    /// The machine's or the driver function's name.
    pub machine_name: String,
    pub driver: GatewayDriver,
    /// The contract's longest await deadline: the compiled park timeout less its grace.
    pub await_timeout_ms: i64,
    pub transport: &'static str,
}

/// The gateway subject of `input`. `driver` replaces the compiled driver (a hand-edited one);
/// the deadline stays the contract's.
pub fn subject(input: &Input, driver: Option<DriverFile>) -> Result<GatewaySubject, Diagnostics> {
    let out = compile(input, StepFunctions)?;
    let g = &out.plan.binding;
    let (file, bytes) = match driver {
        Some(d) => {
            brought_for_the_gateway(&d, g)?;
            (d.file, d.bytes)
        }
        None => (
            out.sfn.machines.driver.clone(),
            serde_json::to_vec(&out.driver).unwrap_or_default(),
        ),
    };
    let placed = in_world(&String::from_utf8_lossy(&bytes), g);
    let driver = asl::parse(&file, placed.as_bytes())?;
    let seconds = park_timeout_seconds(g).saturating_sub(PARK_GRACE_SECONDS);
    Ok(GatewaySubject {
        identity: out.plan.identity.clone(),
        machine_name: out.sfn.machines.driver.clone(),
        driver: GatewayDriver::StepFunctions {
            driver: Box::new(driver),
            event_budget: out.sfn.budget.event_budget,
            scheduled_sweep_seconds: g.scheduled_sweep_seconds(),
        },
        await_timeout_ms: i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX),
        transport: if g.queue_url.is_some() {
            "queue"
        } else {
            "lambda"
        },
    })
}

/// The durable gateway subject of `input`: the driver program the function runs, with the
/// compiled spec's park timeout.
pub fn durable_subject(input: &Input) -> Result<GatewaySubject, Diagnostics> {
    let out = compile(input, LambdaDurable)?;
    let tpf_durable_driver::spec::Binding::Gateway {
        longest_await_seconds,
        ..
    } = out.durable.spec.binding;
    let scheduled_sweep_seconds = out.plan.binding.scheduled_sweep_seconds();
    Ok(GatewaySubject {
        identity: out.plan.identity.clone(),
        machine_name: out.durable.function_name.clone(),
        driver: GatewayDriver::LambdaDurable {
            longest_await_seconds,
            scheduled_sweep_seconds,
        },
        await_timeout_ms: i64::try_from(longest_await_seconds.saturating_mul(1000))
            .unwrap_or(i64::MAX),
        transport: "lambda",
    })
}

/// The driver's text with the user's gateway function (keeping the qualifier it invokes, which
/// a check judges) and starter function addressed as the world's.
/// A brought driver runs in the gateway world only if it reaches the binding's gateway: it names
/// the gateway function (or, on the queue transport, its queue). A driver compiled with an
/// Action API binding names neither, and would poll a world that never answers it.
fn brought_for_the_gateway(d: &DriverFile, g: &GatewayPlan) -> Result<(), Diagnostics> {
    let text = String::from_utf8_lossy(&d.bytes);
    let function = g
        .function_arn
        .rsplit_once(':')
        .map_or(g.function_arn.as_str(), |(name, _)| name);
    let reaches =
        text.contains(function) || g.queue_url.as_deref().is_some_and(|q| text.contains(q));
    if reaches {
        return Ok(());
    }
    Err(Diagnostic::error(
        "GATEWAY_DRIVER_MISMATCH",
        Location::file(&d.file),
        format!(
            "the driver names neither the gateway binding's function ({}) nor its queue: it was compiled with another binding or config",
            g.function_arn
        ),
    )
    .with_hint("pass the config (or `--binding`) the driver was compiled with; the gateway world runs only a gateway driver")
    .into())
}

fn in_world(text: &str, g: &GatewayPlan) -> String {
    let function = match g.function_arn.rsplit_once(':') {
        Some((name, qualifier)) if name.contains(":function:") && !qualifier.is_empty() => name,
        _ => g.function_arn.as_str(),
    };
    text.replace(&g.starter_function_arn, STARTER)
        .replace(function, GATEWAY_FUNCTION)
}

impl GatewaySubject {
    fn sfn_engine(
        &self,
        driver: &StateMachine,
        event_budget: u32,
        scheduled_sweep_seconds: Option<u64>,
    ) -> Result<SfnGatewayEngine, EngineError> {
        let functions = GatewayFunctions {
            gateway_arn: gateway_version_arn(),
            starter_arn: STARTER.into(),
        };
        Ok(
            SfnGatewayEngine::new(&self.machine_name, driver.clone(), functions, T0)?
                .with_proven_history(u64::from(event_budget))
                .with_scheduled_sweep(scheduled_sweep_seconds),
        )
    }

    fn durable_engine(
        longest_await_seconds: u64,
        scheduled_sweep_seconds: Option<u64>,
    ) -> DurableGatewayEngine {
        DurableGatewayEngine::new(
            &gateway_version_arn(),
            GatewayRun {
                longest_await_seconds,
                scheduled_sweep: scheduled_sweep_seconds.is_some(),
            },
            T0,
        )
        .with_scheduled_sweep(scheduled_sweep_seconds)
    }

    /// Every runnable scenario of the catalogue.
    pub fn run_catalogue(&self) -> Result<Vec<ScenarioReport>, EngineError> {
        match &self.driver {
            GatewayDriver::StepFunctions {
                driver,
                event_budget,
                scheduled_sweep_seconds,
            } => try_run_catalogue(self.await_timeout_ms, |_: &Setup| {
                self.sfn_engine(driver, *event_budget, *scheduled_sweep_seconds)
            }),
            GatewayDriver::LambdaDurable {
                longest_await_seconds,
                scheduled_sweep_seconds,
            } => try_run_catalogue(self.await_timeout_ms, |_: &Setup| {
                Ok::<_, EngineError>(Self::durable_engine(
                    *longest_await_seconds,
                    *scheduled_sweep_seconds,
                ))
            }),
        }
    }

    /// One scenario, with the trace it left.
    pub fn run_one(
        &self,
        info: &'static ScenarioInfo,
    ) -> Result<(ScenarioReport, Trace), EngineError> {
        match &self.driver {
            GatewayDriver::StepFunctions {
                driver,
                event_budget,
                scheduled_sweep_seconds,
            } => Ok(self.run_on(
                info,
                self.sfn_engine(driver, *event_budget, *scheduled_sweep_seconds)?,
            )),
            GatewayDriver::LambdaDurable {
                longest_await_seconds,
                scheduled_sweep_seconds,
            } => Ok(self.run_on(
                info,
                Self::durable_engine(*longest_await_seconds, *scheduled_sweep_seconds),
            )),
        }
    }

    fn run_on<E: GatewayEngine>(
        &self,
        info: &'static ScenarioInfo,
        engine: E,
    ) -> (ScenarioReport, Trace) {
        let setup = setup_for(info).with_await_timeout_ms(self.await_timeout_ms);
        let (report, world) = run_in(info, setup, engine, &[]);
        (report, world.trace().clone())
    }

    /// The verdict on one of this subject's reports: the declared failures of its engine known.
    pub fn verdict(&self, r: &ScenarioReport) -> Verdict {
        match self.driver {
            GatewayDriver::StepFunctions { .. } => verdict(r),
            GatewayDriver::LambdaDurable { .. } => durable_verdict(r),
        }
    }
}

/// The verdict on a report of the durable driver: as [`verdict`], except that the Step
/// Functions retry differences do not apply (the durable submitter retries under the same
/// callback id, as TPF's does).
pub fn durable_verdict(r: &ScenarioReport) -> Verdict {
    if SUBMITTER_RETRY.iter().any(|(n, _)| *n == r.name) {
        return if r.passed() {
            Verdict::Passed
        } else {
            Verdict::Failed {
                checks: r.violations.iter().map(|v| v.check.name()).collect(),
                assertion: r.assertion(),
            }
        };
    }
    verdict(r)
}

/// A scenario's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "verdict")]
pub enum Verdict {
    Passed,
    /// A declared failure (a finding of the protocol, or a declared deviation), failing as
    /// declared.
    KnownFailure {
        reason: String,
    },
    /// The checks it broke, by name, and its own assertion's failure.
    Failed {
        checks: Vec<&'static str>,
        assertion: Option<String>,
    },
}

/// The verdict on one report, the declared failures known.
pub fn verdict(r: &ScenarioReport) -> Verdict {
    let checks: Vec<&'static str> = r.violations.iter().map(|v| v.check.name()).collect();
    let failed = || Verdict::Failed {
        checks: checks.clone(),
        assertion: r.assertion(),
    };
    if let Some(f) = FINDINGS.iter().find(|f| f.scenario == r.name) {
        return match &r.outcome {
            Err(e)
                if e.to_string().contains(f.fails_with)
                    && r.violations.iter().all(|v| f.breaks.contains(&v.check)) =>
            {
                Verdict::KnownFailure {
                    reason: format!("a finding of the gateway protocol: {e}"),
                }
            }
            _ => failed(),
        };
    }
    if let Some((_, expectation)) = SUBMITTER_RETRY.iter().find(|(n, _)| *n == r.name) {
        return match &r.outcome {
            Err(e) if e.to_string().contains(expectation) && r.violations.is_empty() => {
                Verdict::KnownFailure {
                    reason: format!(
                        "a Step Functions task retries with a new token (docs/runtime.md): {e}"
                    ),
                }
            }
            Ok(()) if r.violations.is_empty() => Verdict::Passed,
            _ => failed(),
        };
    }
    if r.passed() {
        Verdict::Passed
    } else {
        failed()
    }
}

/// `tpfConformance` from a run: each of TPF's 22 ids with `passed`, `failed` (a covering
/// scenario did not pass; `knownFailure` when every such one is declared) or `not-run`.
pub fn conformance_json(reports: &[ScenarioReport]) -> serde_json::Value {
    conformance_json_by(reports, verdict)
}

/// [`conformance_json`] with the subject's own verdicts.
pub fn conformance_json_by(
    reports: &[ScenarioReport],
    verdict: impl Fn(&ScenarioReport) -> Verdict,
) -> serde_json::Value {
    catalogue::conformance()
        .into_iter()
        .map(|(id, own, covered_by)| {
            let verdicts: Vec<Verdict> = covered_by
                .iter()
                .filter_map(|n| reports.iter().find(|r| r.name == *n))
                .map(&verdict)
                .collect();
            let not_passed: Vec<&Verdict> =
                verdicts.iter().filter(|v| **v != Verdict::Passed).collect();
            let status = if verdicts.is_empty() {
                "not-run"
            } else if not_passed.is_empty() {
                "passed"
            } else {
                "failed"
            };
            serde_json::json!({
                "id": id,
                "scenario": own,
                "title": catalogue::tpf_title(id),
                "coveredBy": covered_by,
                "status": status,
                "knownFailure": !not_passed.is_empty()
                    && not_passed.iter().all(|v| matches!(v, Verdict::KnownFailure { .. })),
                "gap": catalogue::scenario(own).and_then(|s| s.gap),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::checks::{GatewayCheck, Violation};
    use crate::gateway::failure::ScenarioFailure;

    fn report(
        name: &'static str,
        outcome: Result<(), &str>,
        broke: &[GatewayCheck],
    ) -> ScenarioReport {
        ScenarioReport {
            name,
            // What the world showed, as a scenario's own assertion reports it.
            outcome: outcome.map_err(|shown| ScenarioFailure::Unmet {
                expected: "another world".into(),
                shown: shown.to_owned(),
            }),
            violations: broke
                .iter()
                .map(|c| Violation {
                    check: *c,
                    detail: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_declared_failure_is_known_only_while_it_fails_as_declared() {
        let f = &FINDINGS[0];
        let declared = report(f.scenario, Err(f.fails_with), f.breaks);
        assert!(matches!(verdict(&declared), Verdict::KnownFailure { .. }));
        // Another check broken, or another assertion failing: a failure.
        let other = report(
            f.scenario,
            Err(f.fails_with),
            &[GatewayCheck::GenerationFence],
        );
        assert_eq!(
            verdict(&other),
            Verdict::Failed {
                checks: vec!["generation-fence"],
                assertion: Some(format!("{}; expected another world", f.fails_with)),
            }
        );
        let (retry, expectation) = SUBMITTER_RETRY[0];
        let known = report(retry, Err(expectation), &[]);
        assert!(matches!(verdict(&known), Verdict::KnownFailure { .. }));
        let broke = report(retry, Err(expectation), &[GatewayCheck::DeliveryEvidence]);
        assert!(matches!(verdict(&broke), Verdict::Failed { .. }));
        assert_eq!(verdict(&report(retry, Ok(()), &[])), Verdict::Passed);
        let plain = report(
            "tpf-22-await-deadline",
            Ok(()),
            &[GatewayCheck::AwaitDeadlineWhileParked],
        );
        assert!(matches!(verdict(&plain), Verdict::Failed { .. }));
    }

    #[test]
    fn a_conformance_id_is_marked_from_the_run() {
        let passed = report("tpf-22-await-deadline", Ok(()), &[]);
        let failed = report("suspended-timeout", Err("late"), &[]);
        let rows = conformance_json(std::slice::from_ref(&passed));
        assert_eq!(rows[21]["status"], "passed");
        assert_eq!(rows[0]["status"], "not-run");
        let rows = conformance_json(&[passed, failed]);
        assert_eq!(rows[21]["status"], "failed");
        assert_eq!(rows[21]["knownFailure"], false);
    }

    #[test]
    fn the_users_functions_are_addressed_as_the_worlds_keeping_the_qualifier() {
        let g = GatewayPlan {
            function_arn: "arn:aws:lambda:eu-west-1:123456789012:function:gw:12".into(),
            queue_url: None,
            starter_function_arn: "arn:aws:lambda:eu-west-1:123456789012:function:st".into(),
            longest_await_seconds: 60,
            scheduled_sweep: None,
        };
        let text = r#"{"a":"arn:aws:lambda:eu-west-1:123456789012:function:gw:12","b":"arn:aws:lambda:eu-west-1:123456789012:function:st"}"#;
        assert_eq!(
            in_world(text, &g),
            format!(r#"{{"a":"{GATEWAY_FUNCTION}:12","b":"{STARTER}"}}"#)
        );
    }
}
