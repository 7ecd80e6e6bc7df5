//! The gateway world on Lambda durable functions: the gateway driver
//! (`tpf_durable_driver::gateway`) on the replay engine, its park timeout the scenario
//! pipeline's longest await, against every runnable scenario of the catalogue. Every scenario
//! passes and keeps every check, except the [`KNOWN`] differences of the replay engine,
//! each of which must still fail exactly as listed (so fixing one makes this test say so).

use std::rc::Rc;

use durable_interp::engine::Failed;
use durable_interp::{poll, Context, Program, Stop};
use serde_json::Value;
use tpf_durable_driver::gateway::calls::{
    CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll,
};
use tpf_durable_driver::gateway::policy::StepRetry;
use tpf_durable_driver::ops::WriteFailed;
use tpf_durable_driver::{drive_gateway, GatewayEnd, GatewayOps, GatewayRun};
use tpf_sfn_mapping::durable::gateway_engine::DurableGatewayEngine;
use tpf_sfn_mapping::durable::program::EngineOps;
use tpf_sfn_mapping::gateway::catalogue::{scenario, CATALOGUE, FINDINGS};
use tpf_sfn_mapping::gateway::checks::GatewayCheck;
use tpf_sfn_mapping::gateway::scenarios::{run_catalogue, run_scenario, setup_for};
use tpf_sfn_mapping::gateway::world::{gateway_version_arn, Setup, T0};
use tpf_sfn_mapping::sfn::gateway_proof::DURABLE_ENGINE_KNOWN;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse, Mapper};

/// Where the replay engine is not yet the service, and what the scenario then reports
/// (`gateway_proof::DURABLE_ENGINE_KNOWN` says why, for `mapping-test` too).
const KNOWN: [(&str, &str); 3] = DURABLE_ENGINE_KNOWN;

#[test]
fn every_runnable_scenario_keeps_every_check_on_lambda_durable_functions() {
    let reports = run_catalogue(|s: &Setup| {
        let longest_await_seconds =
            u64::try_from((s.longest_await_timeout_ms().max(1) + 999) / 1000).unwrap_or(u64::MAX);
        DurableGatewayEngine::new(
            &gateway_version_arn(),
            GatewayRun {
                longest_await_seconds,
            },
            T0,
        )
    });
    assert_eq!(reports.len(), CATALOGUE.iter().filter(|s| s.runs).count());
    let mut broken = Vec::new();
    for r in &reports {
        // The protocol's findings fail by their own assertion on every engine.
        let known = KNOWN.iter().any(|(name, _)| *name == r.name);
        if let Some(f) = FINDINGS.iter().find(|f| !known && f.scenario == r.name) {
            let says = r.outcome.as_ref().err();
            assert!(
                says.is_some_and(|e| e.contains(f.fails_with)),
                "{}: a finding that no longer fails as declared: {says:?}",
                r.name
            );
            continue;
        }
        match KNOWN.iter().find(|(name, _)| *name == r.name) {
            Some((_, says)) => {
                let e = r.outcome.as_ref().expect_err(r.name);
                assert!(e.contains(says), "{}: {e}", r.name);
            }
            None if !r.passed() || !r.violations.is_empty() => {
                broken.push(format!("{}: {:?} {:?}", r.name, r.outcome, r.violations))
            }
            None => {}
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// TPF's durable driver sets no callback timeout: its callback waits until the durable
/// execution's own timeout (TPF's template: `DurableExecutionTimeoutSeconds`, 2,592,000 s by
/// default). The driver program with that as its park is TPF's host's gap, and fails by name.
#[test]
fn tpfs_host_gap_a_durable_park_without_timeout_breaks_await_deadline_while_parked() {
    const EXECUTION_TIMEOUT_SECONDS: u64 = 2_592_000;
    let info = scenario("tpf-22-await-deadline").unwrap();
    let engine = DurableGatewayEngine::new(
        &gateway_version_arn(),
        GatewayRun {
            longest_await_seconds: EXECUTION_TIMEOUT_SECONDS,
        },
        T0,
    );
    run_scenario(info, engine, &[])
        .failed_by(GatewayCheck::AwaitDeadlineWhileParked)
        .unwrap();
}

/// TPF's durable driver parks at every await of a generation: the driver program, run again
/// in the same generation where it would hand over (from the checkpoint, under its own
/// execution name, its operations renamed so the replay tells the runs apart). Each run parks
/// once; the second registers a second callback in the generation.
struct ParkAtEveryAwait {
    run: GatewayRun,
}

/// The engine's operations under a run's prefix; a hand-over starts nothing (the run goes on
/// in this generation instead).
struct SameGeneration<'c, 'a> {
    ops: EngineOps<'c, 'a>,
    prefix: String,
}

impl GatewayOps for SameGeneration<'_, '_> {
    type Stop = Stop;

    async fn checkpoint(&self, name: &str, value: &Value) -> Result<Value, Stop> {
        self.ops
            .checkpoint(&format!("{}{name}", self.prefix), value)
            .await
    }

    async fn gateway(
        &self,
        name: &str,
        request: &ActionRequest,
        retry: &StepRetry,
    ) -> Result<Result<ActionResponse, GatewayFailure>, Stop> {
        self.ops
            .gateway(&format!("{}{name}", self.prefix), request, retry)
            .await
    }

    async fn wait_for_state(&self, name: &str, poll: &StatePoll) -> Result<PollEnd, Stop> {
        self.ops
            .wait_for_state(&format!("{}{name}", self.prefix), poll)
            .await
    }

    async fn await_callback(
        &self,
        name: &str,
        registration: &Registration,
        timeout_seconds: u64,
    ) -> Result<CallbackEnd, Stop> {
        self.ops
            .await_callback(
                &format!("{}{name}", self.prefix),
                registration,
                timeout_seconds,
            )
            .await
    }

    async fn start_generation(
        &self,
        _name: &str,
        _next: &ExecutionInput,
    ) -> Result<Result<(), WriteFailed>, Stop> {
        Ok(Ok(()))
    }
}

impl Program for ParkAtEveryAwait {
    fn invoke(&self, ctx: &Context<'_>, input: &Value) -> Result<Result<Value, Failed>, Stop> {
        let mut input = ExecutionInput::read_value(input, Mapper::Durable).expect("a start input");
        for run in 0.. {
            let ops = SameGeneration {
                ops: EngineOps {
                    ctx,
                    table: String::new(),
                    gateway_arn: gateway_version_arn(),
                },
                prefix: format!("run-{run}-"),
            };
            match poll::ready(drive_gateway(&ops, &self.run, &input))?? {
                Ok(GatewayEnd::HandedOver(h)) => {
                    input.resume_execution_id = Some(h.execution_id);
                }
                Ok(end) => return Ok(Ok(serde_json::to_value(end).unwrap_or(Value::Null))),
                Err(f) => {
                    return Ok(Err(Failed {
                        error: f.error,
                        cause: f.cause,
                    }))
                }
            }
        }
        unreachable!("the runs end the execution")
    }
}

#[test]
fn tpfs_host_gap_a_durable_second_park_in_a_generation_breaks_one_callback_per_generation() {
    let info = scenario("second-await").unwrap();
    let setup = setup_for(info);
    let longest_await_seconds = u64::try_from(setup.longest_await_timeout_ms() / 1000).unwrap();
    let engine = DurableGatewayEngine::with_program(
        Rc::new(ParkAtEveryAwait {
            run: GatewayRun {
                longest_await_seconds,
            },
        }),
        T0,
    );
    run_scenario(info, engine, &[])
        .failed_by(GatewayCheck::OneCallbackPerGeneration)
        .unwrap();
}
