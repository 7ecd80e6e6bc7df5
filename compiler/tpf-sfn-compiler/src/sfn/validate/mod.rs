//! Static validation of ASL definitions: coded diagnostics and the history-budget proof.
//!
//! Works on any JSONPath-dialect definition, not only the ones this compiler renders. Each rule
//! family lives in its own module under `rules/`; the history proof lives in `history`. Every
//! diagnostic carries a stable code and the JSON pointer of the offending field, so CI can match
//! on both.

mod dag;
mod history;
mod pacing;
mod paths;
mod rules;
mod scope;

use std::collections::BTreeMap;

use serde::Serialize;

pub use history::{HistoryAnalysis, LoopGuard};
pub use paths::{parse_intrinsic, Intrinsic, IntrinsicArg};

use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::sfn::asl::{self, StateMachine};

/// Largest definition CreateStateMachine accepts (API reference: `definition` max length
/// 1,048,576).
pub const MAX_DEFINITION_BYTES: usize = 1_048_576;
/// Largest payload Step Functions passes between states (`States.DataLimitExceeded` above it).
pub const MAX_PAYLOAD_BYTES: usize = 262_144;
/// AWS's hard cap on events in one Standard execution's history.
pub const DEFAULT_EVENT_LIMIT: u64 = 25_000;

/// Every code the validator emits, with what it means. Codes never change meaning.
pub const CODES: &[(&str, &str)] = &[
    ("ASL_JSON_SYNTAX", "the file is not JSON (validate_bytes only)"),
    ("ASL_SCHEMA", "the JSON is not a state machine the typed model can read (validate_bytes only)"),
    ("ASL_DEFINITION_TOO_LARGE", "definition over 1,048,576 bytes (raw bytes, or canonical text for a model)"),
    ("ASL_STATE_NAME", "state name empty, over 80 characters, with control characters, or over 80 UTF-16 units"),
    ("ASL_DUPLICATE_STATE_NAME", "state name used twice anywhere in the definition, branches included"),
    ("ASL_PAYLOAD_TEMPLATE_TOO_LARGE", "Parameters/ResultSelector/ItemSelector/Result serialises over 256 KiB"),
    ("ASL_MISSING_TRANSITION_TARGET", "StartAt, Next, Default or Catch Next names no state in its scope"),
    ("ASL_MISSING_NEXT_OR_END", "a state that needs one has neither or both of Next/End"),
    ("ASL_UNREACHABLE_STATE", "a state cannot be reached from its scope's StartAt"),
    ("ASL_NO_REACHABLE_TERMINAL", "no Succeed/Fail/End state is reachable from StartAt"),
    ("ASL_EMPTY_ERROR_EQUALS", "a retrier or catcher has an empty ErrorEquals"),
    ("ASL_STATES_ALL_NOT_ALONE", "States.ALL shares its ErrorEquals with other names"),
    ("ASL_STATES_ALL_NOT_LAST", "States.ALL is not in the last retrier/catcher"),
    ("ASL_UNKNOWN_STATES_ERROR", "warning: a States.* error name that is not predefined"),
    ("ASL_RETRIER_INVALID", "BackoffRate < 1, MaxAttempts/IntervalSeconds/MaxDelaySeconds out of range, bad JitterStrategy"),
    ("ASL_TIMEOUT_AND_PATH", "TimeoutSeconds with TimeoutSecondsPath, or HeartbeatSeconds with HeartbeatSecondsPath"),
    ("ASL_TIMEOUT_RANGE", "TimeoutSeconds/HeartbeatSeconds of 0 or over 99,999,999"),
    ("ASL_HEARTBEAT_NOT_LESS_THAN_TIMEOUT", "static HeartbeatSeconds >= TimeoutSeconds"),
    ("ASL_UNKNOWN_FIELD", "a field the States Language does not define at that place"),
    ("ASL_UNMODELLED_FIELD", "warning: valid ASL field (distributed Map, Credentials) this toolchain does not check"),
    ("ASL_INVALID_PATH", "a path field or `.$` value that is not a valid path or intrinsic call"),
    ("ASL_RESOURCE_NOT_ARN", "a Task Resource that is not an ARN"),
    ("ASL_CHOICE_NO_RULES", "a Choice state with an empty Choices"),
    ("ASL_CHOICE_RULE_NEXT", "a top-level rule without Next, or a nested rule with Next"),
    ("ASL_CHOICE_RULE_VARIABLE", "a comparison rule without Variable"),
    ("ASL_CHOICE_RULE_OPERATOR", "not exactly one known comparison operator, a mixed or empty And/Or, or a mistyped operand"),
    ("ASL_WAIT_DURATION", "a Wait without exactly one of Seconds/SecondsPath/Timestamp/TimestampPath"),
    ("ASL_WAIT_RANGE", "a Wait's Seconds over 99,999,999"),
    ("ASL_FAIL_BOTH_FORMS", "a Fail with Error and ErrorPath, or Cause and CausePath"),
    ("ASL_MAP_PROCESSOR", "a Map without ItemProcessor, or with both ItemProcessor and Iterator"),
    ("ASL_PARALLEL_NO_BRANCHES", "a Parallel with no branches"),
    ("ASL_JSONATA_OR_VARIABLES", "JSONata, Assign/Arguments/Output or a $variable (error for TpfDriver, warning otherwise)"),
    ("ASL_HISTORY_UNBOUNDED", "a loop without a proven counter guard, or a loop inside a branch/processor"),
    ("ASL_HISTORY_UNPROVEN", "warning: a Map without an item bound, so no history bound exists"),
    ("ASL_HISTORY_BUDGET_EXCEEDED", "the proven worst-case history exceeds the event limit"),
    ("ASL_LOOP_UNPACED", "a way back to an earlier state (continue-as-new included) that takes no time: no Wait of 1 s or more, no parked callback (error for TpfDriver, warning otherwise)"),
];

/// Which definitions the caller expects. `TpfDriver` turns JSONata and variables into errors
/// because the local executors the project tests with cannot run them, makes an unpaced loop
/// an error, and lets the pacing rule tell a call to TPF's action gateway (which its transport
/// answers at once) from a park (REGISTER_CALLBACK, which TPF's wake-up answers). `Auto` is
/// `TpfDriver` for a definition this tool compiled (recognised by its top-level comment) and
/// `Generic` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Profile {
    #[default]
    Generic,
    TpfDriver,
    Auto,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidateOptions {
    /// The history budget the proof must stay under (AWS cap: 25,000).
    pub event_limit: u64,
    /// Upper bound on the items each inline Map iterates over, by Map state name. A Map without
    /// an entry makes the history proof unprovable.
    pub map_item_bounds: BTreeMap<String, u64>,
    pub profile: Profile,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            event_limit: DEFAULT_EVENT_LIMIT,
            map_item_bounds: BTreeMap::new(),
            profile: Profile::Generic,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
    pub history: HistoryAnalysis,
}

impl Report {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Diagnostics with the given code, for tests and callers that react to one problem.
    pub fn with_code<'a>(&'a self, code: &'a str) -> impl Iterator<Item = &'a Diagnostic> + 'a {
        self.diagnostics.iter().filter(move |d| d.code == code)
    }
}

/// `opts` with `Auto` resolved: `TpfDriver` for a definition this tool compiled (its comment
/// starts with the driver's prefix), `Generic` for any other.
fn with_profile(machine: &StateMachine, opts: &ValidateOptions) -> ValidateOptions {
    let mut opts = opts.clone();
    if opts.profile == Profile::Auto {
        let ours = machine
            .comment
            .as_deref()
            .is_some_and(|c| c.starts_with(crate::sfn::render::DRIVER_COMMENT_PREFIX));
        opts.profile = if ours {
            Profile::TpfDriver
        } else {
            Profile::Generic
        };
    }
    opts
}

/// Validates a parsed definition: every rule family, then the history proof.
pub fn validate(file: &str, machine: &StateMachine, opts: &ValidateOptions) -> Report {
    let opts = &with_profile(machine, opts);
    let mut ctx = Ctx::new(file, opts);
    rules::limits::definition_size(&mut ctx, asl::to_canonical_json(machine).len(), "canonical");
    run_rules(ctx, machine)
}

/// Parses and validates raw bytes. Parse failures become diagnostics; the raw size is checked
/// before parsing because AWS measures what it is sent.
pub fn validate_bytes(file: &str, bytes: &[u8], opts: &ValidateOptions) -> Report {
    let size_ctx_opts = opts.clone();
    let mut ctx = Ctx::new(file, &size_ctx_opts);
    rules::limits::definition_size(&mut ctx, bytes.len(), "raw");
    match asl::parse(file, bytes) {
        Ok(machine) => {
            let opts = with_profile(&machine, opts);
            let mut ctx2 = Ctx::new(file, &opts);
            ctx2.out = std::mem::take(&mut ctx.out);
            run_rules(ctx2, &machine)
        }
        Err(d) => {
            ctx.out.push(d);
            Report {
                diagnostics: ctx.out,
                history: HistoryAnalysis::default(),
            }
        }
    }
}

/// The worst-case history of one execution, without diagnostics. See [`HistoryAnalysis`].
pub fn analyze_history(machine: &StateMachine, opts: &ValidateOptions) -> HistoryAnalysis {
    let opts = &with_profile(machine, opts);
    let mut ctx = Ctx::new("", opts);
    history::analyze(&mut ctx, machine)
}

fn run_rules(mut ctx: Ctx<'_>, machine: &StateMachine) -> Report {
    let scopes = scope::scopes(machine);
    rules::limits::check(&mut ctx, &scopes);
    rules::graph::check(&mut ctx, &scopes);
    rules::errors::check(&mut ctx, &scopes);
    rules::fields::check(&mut ctx, machine, &scopes);
    rules::query_language::check(&mut ctx, machine);
    let history = history::analyze(&mut ctx, machine);
    pacing::check(&mut ctx, machine, &history);
    Report {
        diagnostics: ctx.out,
        history,
    }
}

/// Shared state of one validation run: where diagnostics go and how severe profile-dependent
/// ones are.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub opts: &'a ValidateOptions,
    pub out: Vec<Diagnostic>,
}

impl<'a> Ctx<'a> {
    fn new(file: &'a str, opts: &'a ValidateOptions) -> Self {
        Ctx {
            file,
            opts,
            out: Vec::new(),
        }
    }

    pub fn emit(
        &mut self,
        severity: Severity,
        code: &'static str,
        pointer: String,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let location = Location::pointer(self.file, pointer);
        let d = match severity {
            Severity::Error => Diagnostic::error(code, location, message),
            Severity::Warning => Diagnostic::warning(code, location, message),
        };
        self.out.push(d.with_hint(hint));
    }

    pub fn error(
        &mut self,
        code: &'static str,
        pointer: String,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.emit(Severity::Error, code, pointer, message, hint);
    }

    pub fn warning(
        &mut self,
        code: &'static str,
        pointer: String,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.emit(Severity::Warning, code, pointer, message, hint);
    }

    /// Errors for the TPF driver profile, warnings for foreign definitions.
    pub fn profile_severity(&self) -> Severity {
        match self.opts.profile {
            Profile::TpfDriver => Severity::Error,
            Profile::Generic | Profile::Auto => Severity::Warning,
        }
    }
}
