//! Conformance with real AWS: replays every execution in the folder named by
//! `TPF_SFN_AWS_RECORDED` (Step Functions executions recorded on AWS, see that folder's README)
//! in the interpreter, feeding each Task state the results AWS recorded, and compares the
//! status, the output or the error and cause, and the states entered. Out-of-scope records are
//! counted by reason, not run. A fixture file dropped into the folder is picked up with no code
//! change.
//!
//! The recordings are derived from another project's repository, so they are not part of this
//! one: the test command points `TPF_SFN_AWS_RECORDED` at them. Without the variable every test
//! here prints `NOT CHECKED` and passes, and the test command says so in its summary; with the
//! variable set to a folder that cannot be read, they fail.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use asl_interp::{
    Callback, Deferred, Engine, ExecutionStatus, HistoryEvent, TaskCall, TaskHandler, TaskOutcome,
};
use serde_json::{json, Value};

/// Names the replay gives the machine and the execution; they are mapped back to the names AWS
/// recorded (as LocalStack's placeholders) before outputs are compared.
const MACHINE: &str = "conformance-machine-0";
const EXECUTION: &str = "conformance-execution-0";
/// A recording ran for at most a year (the Standard workflow limit).
const HORIZON_MS: i64 = 366 * 86_400_000;

/// The variable naming the folder of recordings.
const RECORDINGS_VAR: &str = "TPF_SFN_AWS_RECORDED";

/// The recordings' folder, or `None` (after saying what goes unchecked) when the variable is
/// unset. A relative path is taken from the workspace root, where the test command runs.
fn fixtures_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os(RECORDINGS_VAR).filter(|v| !v.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            Some(if dir.is_absolute() {
                dir
            } else {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(dir)
            })
        }
        None => {
            eprintln!(
                "NOT CHECKED: {test}: {RECORDINGS_VAR} is not set, so no execution recorded on \
                 AWS was replayed"
            );
            None
        }
    }
}

/// One execution record and the file it came from.
struct Record {
    file: String,
    value: Value,
}

fn load_records(dir: &Path) -> Result<Vec<Record>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "summary.json" {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
        let Some(execs) = doc.get("executions").and_then(Value::as_array) else {
            return Err(format!(
                "{name}: not a fixture file (no \"executions\" array)"
            ));
        };
        for value in execs {
            out.push(Record {
                file: name.clone(),
                value: value.clone(),
            });
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Placeholder-aware comparison. LocalStack replaced volatile values in its recordings with
// placeholders (`<ExecArnPart_0idx>`, `<uuid:1>`, `timestamp`, ...); a recorded string that is
// a placeholder matches any value, one that contains placeholders matches any string with the
// same literal parts around them. Everything else compares exactly (numbers by JSON value).

struct Placeholders {
    /// Replacement texts registered for this execution (regex and value replacements);
    /// reference replacements (`<name:N>`) are covered by the `<token>` rule.
    texts: Vec<String>,
}

impl Placeholders {
    fn from(rec: &Value) -> Self {
        let mut texts = Vec::new();
        for p in rec
            .get("placeholders")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !p.ends_with(":N>") {
                texts.push(p.to_string());
            }
        }
        // Longest first, so a placeholder containing another is found whole.
        texts.sort_by_key(|t| std::cmp::Reverse(t.len()));
        Placeholders { texts }
    }

    /// Splits a recorded string into literal text and placeholder holes.
    fn segments<'s>(&self, s: &'s str) -> Vec<Option<&'s str>> {
        let mut out = Vec::new();
        let mut lit_start = 0;
        let mut i = 0;
        let b = s.as_bytes();
        while i < s.len() {
            if let Some(t) = self.texts.iter().find(|t| s[i..].starts_with(t.as_str())) {
                if lit_start < i {
                    out.push(Some(&s[lit_start..i]));
                }
                out.push(None);
                i += t.len();
                lit_start = i;
                continue;
            }
            if b[i] == b'<' {
                if let Some(len) = angle_token(&s[i..]) {
                    if lit_start < i {
                        out.push(Some(&s[lit_start..i]));
                    }
                    out.push(None);
                    i += len;
                    lit_start = i;
                    continue;
                }
            }
            i += s[i..].chars().next().map_or(1, char::len_utf8);
        }
        if lit_start < s.len() {
            out.push(Some(&s[lit_start..]));
        }
        out
    }

    /// A registered replacement text, or any `<token>` (reference replacements such as
    /// `<uuid:1>` and the names tests register such as `<lambda_function_name>`).
    fn is_whole_placeholder(&self, s: &str) -> bool {
        self.texts.iter().any(|t| t == s) || angle_token(s) == Some(s.len())
    }

    fn matches(&self, expected: &Value, actual: &Value) -> bool {
        match (expected, actual) {
            (Value::String(e), _) if self.is_whole_placeholder(e) => true,
            (Value::String(e), Value::String(a)) => {
                e == a || {
                    let segs = self.segments(e);
                    segs.iter().any(Option::is_none) && glob(&segs, a)
                }
            }
            (Value::Object(e), Value::Object(a)) => {
                e.len() == a.len()
                    && e.iter()
                        .all(|(k, v)| a.get(k).is_some_and(|av| self.matches(v, av)))
            }
            (Value::Array(e), Value::Array(a)) => {
                e.len() == a.len() && e.iter().zip(a).all(|(x, y)| self.matches(x, y))
            }
            (Value::Number(e), Value::Number(a)) => numbers_equal(e, a),
            _ => expected == actual,
        }
    }
}

/// Two JSON numbers are the same value written the same way: AWS prints `3` and `3.0`
/// differently, so an integer never equals a float here.
fn numbers_equal(e: &serde_json::Number, a: &serde_json::Number) -> bool {
    match (e.as_i64(), a.as_i64(), e.as_u64(), a.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => e.is_f64() == a.is_f64() && e.as_f64() == a.as_f64(),
    }
}

/// Length of a `<token>` placeholder at the start of `s`: letters, digits and `_.:-` only, so
/// prose such as `<class 'NoneType'>` stays literal.
fn angle_token(s: &str) -> Option<usize> {
    let rest = s.strip_prefix('<')?;
    let end = rest.find('>')?;
    let inner = &rest[..end];
    (!inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c)))
    .then_some(end + 2)
}

/// Matches `actual` against literal segments and holes (each hole: one or more characters).
fn glob(segs: &[Option<&str>], actual: &str) -> bool {
    match segs.split_first() {
        None => actual.is_empty(),
        Some((Some(lit), rest)) => actual
            .strip_prefix(lit)
            .is_some_and(|tail| glob(rest, tail)),
        Some((None, rest)) => actual
            .char_indices()
            .skip(1)
            .map(|(i, _)| i)
            .chain(std::iter::once(actual.len()))
            .filter(|&i| i > 0)
            .any(|i| glob(rest, &actual[i..])),
    }
}

// ---------------------------------------------------------------------------------------------
// The Task handler: answers each Task attempt with what AWS recorded for that state visit.

#[derive(Debug, Clone)]
enum Outcome {
    Succeeded(Value),
    Failed {
        error: String,
        cause: String,
    },
    TimedOut,
    /// The attempt was still running when the execution (or its branch) ended.
    Unfinished,
}

#[derive(Debug, Clone)]
struct Attempt {
    parameters: Option<Value>,
    submitted: Option<Value>,
    outcome: Outcome,
}

#[derive(Debug)]
struct Visit {
    state: String,
    attempts: Vec<Attempt>,
    /// Attempts handed out so far; a visit is taken when its first attempt is.
    served: usize,
}

struct Recorded<'p> {
    visits: Vec<Visit>,
    deferred: Vec<Deferred>,
    problems: Vec<String>,
    placeholders: &'p Placeholders,
}

/// A recorded cause is text, or an object when LocalStack parsed JSON-looking text.
fn cause_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn parse_visits(rec: &Value) -> Vec<Visit> {
    let mut out = Vec::new();
    for t in rec
        .get("tasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let attempts = t
            .get("attempts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| {
                let outcome = match a.get("outcome").and_then(Value::as_str) {
                    Some("succeeded") => {
                        Outcome::Succeeded(a.get("output").cloned().unwrap_or(Value::Null))
                    }
                    Some("failed") => Outcome::Failed {
                        error: a
                            .get("error")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        cause: cause_text(a.get("cause")),
                    },
                    Some("timed_out") => Outcome::TimedOut,
                    _ => Outcome::Unfinished,
                };
                Attempt {
                    parameters: a.get("parameters").cloned(),
                    submitted: a.get("submitted").cloned(),
                    outcome,
                }
            })
            .collect();
        out.push(Visit {
            state: t
                .get("state")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            attempts,
            served: 0,
        });
    }
    out
}

impl Recorded<'_> {
    /// The visit this attempt belongs to: for a first attempt the earliest untaken visit of the
    /// state (preferring one whose recorded parameters match, so parallel iterations pair up
    /// whatever order they run in); for a retry the taken visit with that many attempts served.
    fn find(&self, call: &TaskCall<'_>) -> Option<usize> {
        let attempt = call.retry_count as usize;
        let candidates: Vec<usize> = self
            .visits
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                v.state == call.state_name && v.served == attempt && attempt < v.attempts.len()
            })
            .map(|(i, _)| i)
            .collect();
        candidates
            .iter()
            .copied()
            .find(|&i| {
                self.visits[i].attempts[attempt]
                    .parameters
                    .as_ref()
                    .is_some_and(|p| self.placeholders.matches(p, call.input))
            })
            .or_else(|| candidates.first().copied())
    }
}

impl TaskHandler for Recorded<'_> {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        let Some(i) = self.find(call) else {
            self.problems.push(format!(
                "the interpreter ran attempt {} of Task state '{}', which AWS did not record",
                call.retry_count + 1,
                call.state_name
            ));
            return TaskOutcome::failed("Conformance.NotRecorded", "no recorded attempt");
        };
        let visit = &mut self.visits[i];
        let attempt = visit.attempts[visit.served].clone();
        visit.served += 1;
        let submitted = attempt.submitted.clone().unwrap_or_else(|| json!({}));
        match (call.task_token, attempt.outcome) {
            (Some(token), Outcome::Succeeded(output)) => {
                self.deferred.push(Deferred {
                    at_ms: call.now_ms,
                    callback: Callback::Success {
                        token: token.to_string(),
                        output,
                    },
                });
                TaskOutcome::Succeeded(submitted)
            }
            (Some(token), Outcome::Failed { error, cause }) if attempt.submitted.is_some() => {
                self.deferred.push(Deferred {
                    at_ms: call.now_ms,
                    callback: Callback::Failure {
                        token: token.to_string(),
                        error,
                        cause,
                    },
                });
                TaskOutcome::Succeeded(submitted)
            }
            (Some(_), Outcome::TimedOut | Outcome::Unfinished) => TaskOutcome::Succeeded(submitted),
            (_, Outcome::Succeeded(output)) => TaskOutcome::Succeeded(output),
            (_, Outcome::Failed { error, cause }) => TaskOutcome::Failed { error, cause },
            (None, Outcome::TimedOut | Outcome::Unfinished) => TaskOutcome::Pending,
        }
    }

    fn deferred(&mut self) -> Vec<Deferred> {
        std::mem::take(&mut self.deferred)
    }
}

// ---------------------------------------------------------------------------------------------
// Replaying one record.

/// Maps the interpreter's own names back to what AWS recorded for this execution.
struct Identity {
    pairs: Vec<(String, String)>,
}

impl Identity {
    fn new(rec: &Value, machine_arn: &str, execution_arn: &str) -> Self {
        let ctx = rec.get("context").cloned().unwrap_or(Value::Null);
        let get = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_string);
        let mut pairs = Vec::new();
        let mut push = |ours: &str, theirs: Option<String>| {
            if let Some(t) = theirs {
                pairs.push((ours.to_string(), t));
            }
        };
        push(execution_arn, get("execution_id"));
        push(machine_arn, get("state_machine_id"));
        push(
            "arn:aws:iam::123456789012:role/StepFunctionsRole",
            get("role_arn"),
        );
        push(EXECUTION, get("execution_name"));
        push(MACHINE, get("state_machine_name"));
        Identity { pairs }
    }

    fn apply(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                let mut s = s.clone();
                for (ours, theirs) in &self.pairs {
                    if s.contains(ours.as_str()) {
                        s = s.replace(ours.as_str(), theirs);
                    }
                }
                Value::String(s)
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.apply(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (self.apply_str(k), self.apply(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn apply_str(&self, s: &str) -> String {
        match self.apply(&Value::String(s.to_string())) {
            Value::String(s) => s,
            _ => s.to_string(),
        }
    }
}

fn has_fan_out(v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            matches!(
                o.get("Type").and_then(Value::as_str),
                Some("Map" | "Parallel")
            ) || o.values().any(has_fan_out)
        }
        Value::Array(a) => a.iter().any(has_fan_out),
        _ => false,
    }
}

fn entered(history: &[HistoryEvent]) -> Vec<String> {
    history
        .iter()
        .filter(|e| e.event_type.ends_with("StateEntered"))
        .filter_map(|e| e.state_name.clone())
        .collect()
}

/// What the interpreter ended with, in the shape a recording holds.
struct Actual<'a> {
    status: &'a str,
    output: Option<&'a Value>,
    error: Option<&'a str>,
    cause: Option<&'a str>,
}

/// Compares one terminal result (`error`/`cause`/`output`) with the recording.
fn compare_result(
    what: &str,
    expected: &Value,
    actual: Actual<'_>,
    ph: &Placeholders,
    id: &Identity,
    diffs: &mut Vec<String>,
) {
    let Actual {
        status,
        output,
        error,
        cause,
    } = actual;
    let exp_status = expected.get("status").and_then(Value::as_str).unwrap_or("");
    if exp_status != status {
        diffs.push(format!("{what}: status {status}, AWS {exp_status}"));
        return;
    }
    if exp_status == "SUCCEEDED" {
        if expected.get("output_opaque").is_some() {
            return;
        }
        let exp = expected.get("output").unwrap_or(&Value::Null);
        let act = output.map(|o| id.apply(o)).unwrap_or(Value::Null);
        if !ph.matches(exp, &act) {
            diffs.push(format!("{what}: output\n    ours {act}\n    AWS  {exp}"));
        }
        return;
    }
    let exp_error = expected.get("error").and_then(Value::as_str);
    let act_error = error.filter(|e| !e.is_empty());
    let err_ok = match (exp_error, act_error) {
        (Some(e), Some(a)) => ph.matches(&json!(e), &json!(a)),
        (None, None) => true,
        _ => false,
    };
    if !err_ok {
        diffs.push(format!("{what}: error {act_error:?}, AWS {exp_error:?}"));
    }
    let act_cause = cause
        .filter(|c| !c.is_empty())
        .map(|c| id.apply(&Value::String(c.to_string())));
    let cause_ok = match (expected.get("cause"), &act_cause) {
        (None, None) => true,
        (Some(Value::String(e)), Some(a)) => ph.matches(&json!(e), a),
        // LocalStack stored JSON-looking causes parsed.
        (Some(e @ Value::Object(_)), Some(Value::String(a))) => {
            serde_json::from_str::<Value>(a).is_ok_and(|a| ph.matches(e, &id.apply(&a)))
        }
        _ => false,
    };
    if !cause_ok {
        diffs.push(format!(
            "{what}: cause\n    ours {}\n    AWS  {}",
            act_cause.map_or("(none)".to_string(), |c| c.to_string()),
            expected
                .get("cause")
                .map_or("(none)".to_string(), |c| c.to_string())
        ));
    }
}

fn top_level_names(def: &Value) -> Vec<String> {
    def.get("States")
        .and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn nested_names(v: &Value, top: bool, out: &mut Vec<String>) {
    if let Some(states) = v.get("States").and_then(Value::as_object) {
        for (name, st) in states {
            if !top {
                out.push(name.clone());
            }
            for key in ["Iterator", "ItemProcessor"] {
                if let Some(p) = st.get(key) {
                    nested_names(p, false, out);
                }
            }
            for b in st
                .get("Branches")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                nested_names(b, false, out);
            }
        }
    }
}

fn compare_states(def: &Value, expected: &[String], actual: &[String], diffs: &mut Vec<String>) {
    if !has_fan_out(def) {
        if expected != actual {
            diffs.push(format!(
                "states entered\n    ours {actual:?}\n    AWS  {expected:?}"
            ));
        }
        return;
    }
    // Branches and iterations run concurrently on AWS, so their events interleave in an order
    // the recording does not fix: compare the top level in order and everything as a multiset.
    let mut nested = Vec::new();
    nested_names(def, true, &mut nested);
    let top: Vec<String> = top_level_names(def)
        .into_iter()
        .filter(|n| !nested.contains(n))
        .collect();
    let project =
        |xs: &[String]| -> Vec<String> { xs.iter().filter(|n| top.contains(n)).cloned().collect() };
    let count = |xs: &[String]| -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for x in xs {
            *m.entry(x.clone()).or_insert(0) += 1;
        }
        m
    };
    if project(expected) != project(actual) || count(expected) != count(actual) {
        diffs.push(format!(
            "states entered (fan-out: top level in order, all as a multiset)\n    ours {actual:?}\n    AWS  {expected:?}"
        ));
    }
}

fn replay(rec: &Value) -> Result<(), String> {
    let ph = Placeholders::from(rec);
    let def_value = rec.get("definition").cloned().unwrap_or(Value::Null);
    let definition = asl_model::from_value(def_value.clone())
        .map_err(|d| format!("definition refused by the ASL model: {d}"))?;
    let start_ms = rec
        .get("start_ms")
        .and_then(Value::as_i64)
        .unwrap_or(1_700_000_000_000);
    let mut engine = Engine::new(start_ms, 7);
    engine.set_builtin_integrations(false);
    let machine = engine
        .create_state_machine(MACHINE, definition)
        .map_err(|e| format!("CreateStateMachine refused the definition: {e}"))?;
    let input = rec.get("input").cloned().unwrap_or_else(|| json!({}));
    let arn = engine
        .start_execution(&machine, EXECUTION, input)
        .map_err(|e| format!("StartExecution refused: {e}"))?
        .execution_arn;
    let mut handler = Recorded {
        visits: parse_visits(rec),
        deferred: Vec::new(),
        problems: Vec::new(),
        placeholders: &ph,
    };
    engine.advance_until_idle_or(start_ms + HORIZON_MS, &mut handler);
    let id = Identity::new(rec, &machine, &arn);
    let mut diffs = std::mem::take(&mut handler.problems);

    let status = engine
        .status(&arn)
        .map_or("UNKNOWN", ExecutionStatus::as_str);
    let history = engine.history(&arn);
    let expected = rec.get("result").cloned().unwrap_or(Value::Null);
    if rec.get("kind").and_then(Value::as_str) == Some("history")
        || rec.get("kind").and_then(Value::as_str) == Some("output")
    {
        let last = history.last();
        let field = |k: &str| {
            last.and_then(|e| e.detail(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let (error, cause) = (field("error"), field("cause"));
        compare_result(
            "result",
            &expected,
            Actual {
                status,
                output: last.and_then(|e| e.detail("output")),
                error: error.as_deref(),
                cause: cause.as_deref(),
            },
            &ph,
            &id,
            &mut diffs,
        );
    }
    let describes: Vec<Value> = if rec.get("kind").and_then(Value::as_str) == Some("describe") {
        vec![expected.clone()]
    } else {
        rec.get("describe")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if !describes.is_empty() {
        let d = engine
            .describe_execution(&arn)
            .map_err(|e| format!("DescribeExecution: {e}"))?;
        for exp in &describes {
            compare_result(
                "DescribeExecution",
                exp,
                Actual {
                    status: d.status.as_str(),
                    output: d.output.as_ref(),
                    error: d.error.as_deref(),
                    cause: d.cause.as_deref(),
                },
                &ph,
                &id,
                &mut diffs,
            );
        }
    }
    if let Some(exp_states) = rec.get("states_entered").and_then(Value::as_array) {
        let exp: Vec<String> = exp_states
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        compare_states(&def_value, &exp, &entered(history), &mut diffs);
    }
    if status != "RUNNING" && !has_fan_out(&def_value) {
        for v in &handler.visits {
            let recorded = v
                .attempts
                .iter()
                .filter(|a| !matches!(a.outcome, Outcome::Unfinished))
                .count();
            if v.served < recorded {
                diffs.push(format!(
                    "AWS ran {recorded} attempt(s) of Task state '{}', the interpreter {}",
                    v.state, v.served
                ));
            }
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("\n  "))
    }
}

#[test]
fn aws_recorded_executions_replay_as_recorded() {
    let Some(dir) = fixtures_dir("aws_recorded_executions_replay_as_recorded") else {
        return;
    };
    let records = load_records(&dir).unwrap_or_else(|e| panic!("fixtures: {e}"));
    assert!(!records.is_empty(), "no fixtures found");
    let mut out_of_scope: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_scope = 0usize;
    let mut passed = 0usize;
    let mut failures: Vec<String> = Vec::new();
    let mut by_file: HashMap<String, (usize, usize)> = HashMap::new();
    for r in &records {
        let rec = &r.value;
        let rid = rec.get("id").and_then(Value::as_str).unwrap_or("?");
        if rec.get("scope").and_then(Value::as_str) != Some("in") {
            let reason = rec
                .get("out_of_scope_reason")
                .and_then(Value::as_str)
                .unwrap_or("(no reason given)");
            *out_of_scope.entry(reason.to_string()).or_insert(0) += 1;
            continue;
        }
        in_scope += 1;
        let entry = by_file.entry(r.file.clone()).or_insert((0, 0));
        entry.0 += 1;
        match replay(rec) {
            Ok(()) => {
                passed += 1;
                entry.1 += 1;
            }
            Err(d) => failures.push(format!("{} :: {rid}\n  {d}", r.file)),
        }
    }
    let mut report = String::new();
    let _ = writeln!(
        report,
        "AWS-recorded executions: {} total, {in_scope} in scope, {passed} passed, {} out of scope",
        records.len(),
        records.len() - in_scope
    );
    for (reason, n) in &out_of_scope {
        let _ = writeln!(report, "  out of scope: {n:4}  {reason}");
    }
    println!("{report}");
    if std::env::var_os("CONFORMANCE_VERBOSE").is_some() {
        let mut files: Vec<_> = by_file.iter().collect();
        files.sort();
        for (f, (n, p)) in files {
            println!("  {p:4}/{n:<4} {f}");
        }
    }
    let shown: Vec<&String> = failures.iter().take(400).collect();
    assert!(
        failures.is_empty(),
        "{} of {in_scope} in-scope executions differ from AWS:\n\n{}",
        failures.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The runner's own checks must be able to fail.

fn ph(list: &[&str]) -> Placeholders {
    Placeholders::from(&json!({ "placeholders": list }))
}

#[test]
fn placeholders_match_only_what_they_stand_for() {
    let p = ph(&["timestamp", "<uuid:N>", "snf_role_arn"]);
    // A whole placeholder stands for any value, of any type.
    assert!(p.matches(&json!("timestamp"), &json!(12)));
    assert!(p.matches(&json!("<uuid:3>"), &json!("6f1c...")));
    assert!(p.matches(&json!("<ExecArnPart_0idx>"), &json!("x")));
    // Inside a string only the placeholder part is free.
    assert!(p.matches(
        &json!("arn:<partition>:states:<region>:1:execution:<ArnPart_0idx>:e"),
        &json!("arn:aws:states:eu-west-1:1:execution:m:e")
    ));
    assert!(!p.matches(
        &json!("arn:<partition>:states:<region>:1:execution:<ArnPart_0idx>:e"),
        &json!("arn:aws:states:eu-west-1:1:execution:m:other")
    ));
    // Prose in angle brackets is literal.
    assert!(!p.matches(&json!("<class 'NoneType'>"), &json!("<class 'str'>")));
    // Numbers compare by value and by kind, as AWS prints them.
    assert!(p.matches(&json!(3), &json!(3)));
    assert!(!p.matches(&json!(3), &json!(3.0)));
    assert!(!p.matches(&json!(3), &json!(4)));
    assert!(!p.matches(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    assert!(!p.matches(&json!([1, 2]), &json!([2, 1])));
}

/// Records in the recordings' format, written for this project, so the runner's own checks run
/// whether or not the recordings are at hand: a Task that succeeds, and a Fail state.
fn own_records() -> (Value, Value) {
    let placeholders = json!([
        "<ArnPart_0idx>",
        "<ExecArnPart_0idx>",
        "<region>",
        "<uuid:N>"
    ]);
    let with_task = json!({
        "id": "own::one-task",
        "kind": "history",
        "machine_type": "STANDARD",
        "start": "async",
        "mocked": false,
        "scope": "in",
        "input": {"order": 7},
        "definition": {
            "StartAt": "Call",
            "States": {"Call": {"Type": "Task", "Resource": "own_function_arn", "End": true}}
        },
        "states_entered": ["Call"],
        "tasks": [{
            "state": "Call",
            "attempts": [{
                "resource": "own_function_arn",
                "resource_type": null,
                "parameters": {"order": 7},
                "outcome": "succeeded",
                "output": {"approved": true}
            }]
        }],
        "result": {"status": "SUCCEEDED", "output": {"approved": true}},
        "placeholders": placeholders,
    });
    let failed = json!({
        "id": "own::fail-state",
        "kind": "history",
        "machine_type": "STANDARD",
        "start": "async",
        "mocked": false,
        "scope": "in",
        "input": {},
        "definition": {
            "StartAt": "Stop",
            "States": {"Stop": {"Type": "Fail", "Error": "Own.Error", "Cause": "own cause"}}
        },
        "states_entered": ["Stop"],
        "tasks": [],
        "result": {"status": "FAILED", "error": "Own.Error", "cause": "own cause"},
        "placeholders": placeholders,
    });
    (with_task, failed)
}

/// The first in-scope record of a kind among the recordings, when they are at hand.
fn recorded_sample(pred: impl Fn(&Value) -> bool) -> Option<Value> {
    let dir = fixtures_dir("a_tampered_recording_is_reported (on a recording)")?;
    let found = load_records(&dir)
        .expect("fixtures")
        .into_iter()
        .map(|r| r.value)
        .find(|v| v.get("scope").and_then(Value::as_str) == Some("in") && pred(v))
        .expect("a matching fixture");
    Some(found)
}

/// Every tampering of a record that replays must be reported, naming what differs.
fn assert_tampering_is_reported(with_task: Value, failed: Value) {
    replay(&with_task).expect("the untouched recording replays");

    let mut r = with_task.clone();
    r["result"]["output"] = json!({"not": "what AWS returned"});
    assert!(replay(&r).unwrap_err().contains("output"));

    let mut r = with_task.clone();
    r["result"]["status"] = json!("FAILED");
    assert!(replay(&r).unwrap_err().contains("status"));

    let mut r = with_task.clone();
    if let Some(s) = r["states_entered"].as_array_mut() {
        s.push(json!("NoSuchState"));
    }
    assert!(replay(&r).unwrap_err().contains("states entered"));

    // A Task the recording never ran.
    let mut r = with_task.clone();
    r["tasks"] = json!([]);
    assert!(replay(&r).unwrap_err().contains("which AWS did not record"));

    // A recorded attempt the interpreter never asked for.
    let mut r = with_task;
    let extra = r["tasks"][0].clone();
    r["tasks"].as_array_mut().unwrap().push(extra);
    assert!(replay(&r).unwrap_err().contains("attempt(s) of Task state"));

    replay(&failed).expect("the untouched recording replays");
    let mut r = failed.clone();
    r["result"]["cause"] = json!("another cause");
    assert!(replay(&r).unwrap_err().contains("cause"));
    let mut r = failed;
    r["result"]["error"] = json!("Another.Error");
    assert!(replay(&r).unwrap_err().contains("error"));
}

#[test]
fn a_tampered_recording_is_reported() {
    let (with_task, failed) = own_records();
    assert_tampering_is_reported(with_task, failed);
    let with_task = recorded_sample(|v| {
        v["kind"] == "history"
            && v["result"]["status"] == "SUCCEEDED"
            && v["tasks"].as_array().is_some_and(|t| t.len() == 1)
            && !has_fan_out(&v["definition"])
    });
    let failed = recorded_sample(|v| v["kind"] == "history" && v["result"]["cause"].is_string());
    if let (Some(with_task), Some(failed)) = (with_task, failed) {
        assert_tampering_is_reported(with_task, failed);
    }
}
