//! The comparison with our interpreter: the driver path a run took (moto's history normalised,
//! or the interpreter's events) and the data both runs must agree on.

use serde_json::{json, Value};
use tpf_sfn_compiler::sfn::states::driver as states;
use tpf_sfn_mapping::scenario::run::TENANT as SIM_TENANT;
use tpf_sfn_mapping::sfn::Run;

/// The inputs of the states in `interpreter_generations`, generation by generation.
pub fn interpreter_inputs(sim: &Run) -> Vec<Vec<Value>> {
    interpreter_entered(sim, |e| e.detail("input").cloned().unwrap_or(Value::Null))
}

/// One value per state entered, for every driver generation in the interpreter run, oldest
/// first.
fn interpreter_entered<T>(
    sim: &Run,
    value: impl Fn(&asl_interp::HistoryEvent) -> T,
) -> Vec<Vec<T>> {
    let world = &sim.world;
    let mut all = Vec::new();
    for r in &world.releases {
        for arn in world.engine.list_executions(&r.driver_arn) {
            let start = world
                .engine
                .describe_execution(arn)
                .map(|d| d.start_ms)
                .expect("describe");
            let values: Vec<T> = world
                .engine
                .history(arn)
                .iter()
                .filter(|e| e.event_type.ends_with("StateEntered"))
                .map(&value)
                .collect();
            all.push((start, values));
        }
    }
    all.sort_by_key(|(start, _)| *start);
    all.into_iter().map(|(_, v)| v).collect()
}

/// What of a driver state's input both runs must agree on: the driver's own counters and
/// TPF's answer. Ids, unit ids and times differ between the runs by construction. `exact` is
/// false for a moto path from which early wakes were dropped: each added a loop iteration, and
/// the answer the driver carried on was the early call's (`claimed: false`, same record).
pub fn digest(input: &Value, exact: bool) -> Value {
    let pick = |obj: &Value, keys: &[&str]| -> Value {
        keys.iter()
            .map(|k| (k.to_string(), obj.get(*k).cloned().unwrap_or(Value::Null)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let (driver_keys, tpf_keys): (&[&str], &[&str]) = if exact {
        (
            &["generation"],
            &[
                "nextIteration",
                "status",
                "version",
                "currentStepIndex",
                "attempt",
                "claimed",
                "errorCode",
            ],
        )
    } else {
        (
            &["generation"],
            &[
                "status",
                "version",
                "currentStepIndex",
                "attempt",
                "errorCode",
            ],
        )
    };
    json!({
        "driver": pick(input, driver_keys),
        "tpf": pick(&input["tpf"], tpf_keys),
    })
}

/// Entered-state names of every driver generation in the interpreter run, oldest first.
pub fn interpreter_generations(sim: &Run) -> Vec<Vec<String>> {
    interpreter_entered(sim, |e| e.state_name.clone().unwrap_or_default())
}

/// The fields of TPF's record that say where an execution ended and how many transitions it
/// took, for the interpreter run's first execution.
pub fn interpreter_record(sim: &Run) -> Value {
    let exec = sim.execution_id.as_deref().expect("simulated execution");
    let r = sim
        .world
        .host
        .coordinator()
        .status(SIM_TENANT, exec, sim.world.now_ms())
        .expect("simulated record");
    json!({
        "status": r.status,
        "stepIndex": r.current_step_index,
        "attempt": r.attempt,
        "version": r.version,
        "errorCode": r.error_code,
    })
}

/// A driver's path through its states, as moto ran it.
#[derive(Debug, Default)]
pub struct DriverPath {
    /// Every state entered, in order.
    pub states: Vec<String>,
    /// The same, without the loop iterations that only re-waited after an early wake.
    pub normalised: Vec<String>,
    /// The input of each state in `normalised`.
    pub inputs: Vec<Value>,
    /// How many such iterations there were.
    pub early_wakes: usize,
}

/// Reads a driver's history. moto's Wait `TimestampPath` sleeps `int(seconds left)`, so it
/// wakes up to a second before `nextDueAt`; TPF answers that call with `claimed: false` and the
/// same record version (no transition), and the driver waits again. AWS waits until the
/// timestamp and our interpreter does too, so the comparison drops exactly those iterations
/// (Count loop iteration .. Wait until due around a not-claimed, unchanged WAIT_RETRY/QUEUED
/// answer) and counts them.
pub async fn driver_path(sfn: &aws_sdk_sfn::Client, arn: &str) -> DriverPath {
    let Ok(history) = sfn
        .get_execution_history()
        .execution_arn(arn)
        .max_results(1000)
        .send()
        .await
    else {
        return DriverPath::default();
    };
    let events = history.events().iter().filter_map(|e| {
        if let Some(d) = e.state_entered_event_details() {
            Some(Event::Entered(
                d.name().to_owned(),
                d.input().unwrap_or_default().to_owned(),
            ))
        } else {
            e.task_succeeded_event_details()
                .map(|d| Event::TaskSucceeded(d.output().unwrap_or_default().to_owned()))
        }
    });
    normalise(events)
}

/// The history events `normalise` reads.
pub enum Event {
    /// A state's name and its input (JSON text).
    Entered(String, String),
    /// A task's output.
    TaskSucceeded(String),
}

/// See `driver_path`.
pub fn normalise(events: impl IntoIterator<Item = Event>) -> DriverPath {
    let mut path = DriverPath::default();
    let mut iteration_start = None;
    let mut last_version: Option<i64> = None;
    let mut drop_from = None;
    for event in events {
        match event {
            Event::Entered(name, input) => {
                path.states.push(name.clone());
                if name == states::PROCESS {
                    iteration_start = Some(path.normalised.len());
                }
                if name == states::WAIT_DUE {
                    if let Some(at) = drop_from.take() {
                        path.normalised.truncate(at);
                        path.inputs.truncate(at);
                        path.early_wakes += 1;
                        continue;
                    }
                }
                path.normalised.push(name);
                path.inputs
                    .push(serde_json::from_str(&input).unwrap_or(Value::Null));
            }
            Event::TaskSucceeded(output) => {
                if path.normalised.last().map(String::as_str) != Some(states::PROCESS) {
                    continue;
                }
                let out: Value = serde_json::from_str(&output).unwrap_or(Value::Null);
                let version = out["version"].as_i64();
                let waiting = matches!(out["status"].as_str(), Some("WAIT_RETRY" | "QUEUED"));
                if out["claimed"] == false
                    && waiting
                    && version.is_some()
                    && version == last_version
                {
                    drop_from = iteration_start;
                }
                last_version = version;
            }
        }
    }
    path
}
