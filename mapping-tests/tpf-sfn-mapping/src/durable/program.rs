//! The driver program on the replay engine: `tpf_durable_driver::Ops` over the engine's
//! operations, and the function version's handler that runs `drive` from the start on every
//! invocation.

use std::sync::Arc;

use durable_interp::engine::Failed;
use durable_interp::{poll, CallbackOutcome, Context, Program, StepError, Stop};
use serde_json::{json, Value};
use tpf_durable_driver::ops::{
    ActionCall, CallOutcome, GenerationRow, Ops, ParkRequest, Wake, WriteFailed,
};
use tpf_durable_driver::{drive, DriverInput, DurableSpec, End};

/// The payload keys the harness's step handler reads.
pub(crate) mod payload {
    pub const TABLE: &str = "table";
    pub const ROW: &str = "row";
    pub const CALL: &str = "call";
    pub const PARK: &str = "park";
    pub const NEXT: &str = "next";
}

/// The engine's operations as the driver asks for them. Each step's payload carries what its
/// effect needs; each result is what the driver reads back, so a replay reads the same.
pub struct EngineOps<'c, 'a> {
    pub ctx: &'c Context<'a>,
    /// The table the spec names for the driver's rows.
    pub table: String,
}

impl Ops for EngineOps<'_, '_> {
    type Stop = Stop;

    async fn register(
        &self,
        name: &str,
        row: &GenerationRow,
    ) -> Result<Result<(), WriteFailed>, Stop> {
        let p = json!({ payload::TABLE: self.table, payload::ROW: row });
        Ok(self
            .ctx
            .step(name, &p)?
            .map(|_| ())
            .map_err(|e| WriteFailed::new(e.0)))
    }

    async fn call(&self, name: &str, call: &ActionCall) -> Result<CallOutcome, Stop> {
        let p = json!({ payload::CALL: call });
        Ok(match self.ctx.step(name, &p)? {
            Ok(v) => serde_json::from_value(v).unwrap_or_else(|e| CallOutcome::Transport {
                message: format!("the call step's checkpoint does not decode: {e}"),
            }),
            Err(StepError(message)) => CallOutcome::Transport { message },
        })
    }

    async fn wait(&self, name: &str, seconds: u64) -> Result<(), Stop> {
        self.ctx.wait(name, seconds)
    }

    async fn park(&self, name: &str, park: &ParkRequest) -> Result<Wake, Stop> {
        let p = json!({ payload::TABLE: self.table, payload::PARK: park });
        Ok(
            match self.ctx.wait_for_callback(name, park.timeout_seconds, &p)? {
                CallbackOutcome::Succeeded(payload) => Wake::Woken { payload },
                // Whoever fails a callback only wakes the driver too: it asks TPF either way.
                CallbackOutcome::Failed { error } => Wake::Woken {
                    payload: json!({ "error": error }),
                },
                CallbackOutcome::TimedOut => Wake::TimedOut,
                CallbackOutcome::SubmitterFailed(message) => Wake::NotRegistered { message },
            },
        )
    }

    async fn hand_over(
        &self,
        name: &str,
        next: &DriverInput,
    ) -> Result<Result<(), WriteFailed>, Stop> {
        let p = json!({ payload::NEXT: next });
        Ok(self
            .ctx
            .step(name, &p)?
            .map(|_| ())
            .map_err(|e| WriteFailed::new(e.0)))
    }
}

/// How one invocation runs the driver loop: the compiled driver, or (in the proof's own tests)
/// a deliberately broken one, so every check can be seen to fail.
pub trait Variant {
    fn run(
        &self,
        ops: &EngineOps<'_, '_>,
        spec: &DurableSpec,
        input: &DriverInput,
    ) -> Result<Result<End, Stop>, Stop>;
}

/// The driver as shipped.
pub struct Compiled;

impl Variant for Compiled {
    fn run(
        &self,
        ops: &EngineOps<'_, '_>,
        spec: &DurableSpec,
        input: &DriverInput,
    ) -> Result<Result<End, Stop>, Stop> {
        poll::ready(drive(ops, spec, input))
    }
}

/// One published function version: a release's spec and the loop that runs it.
pub struct DriverProgram {
    pub spec: DurableSpec,
    pub variant: Arc<dyn Variant>,
}

/// The error a driver fails with when its input is not a generation's input.
pub const BAD_INPUT: &str = "TPF.BadDriverInput";

impl Program for DriverProgram {
    fn invoke(&self, ctx: &Context<'_>, input: &Value) -> Result<Result<Value, Failed>, Stop> {
        let input: DriverInput = match serde_json::from_value(input.clone()) {
            Ok(i) => i,
            Err(e) => {
                return Ok(Err(Failed {
                    error: BAD_INPUT.to_string(),
                    cause: e.to_string(),
                }))
            }
        };
        let ops = EngineOps {
            ctx,
            table: self.spec.wakeup.table_name.clone(),
        };
        Ok(match self.variant.run(&ops, &self.spec, &input)?? {
            End::Failed { error, cause } => Err(Failed { error, cause }),
            end => Ok(serde_json::to_value(end).unwrap_or(Value::Null)),
        })
    }
}
