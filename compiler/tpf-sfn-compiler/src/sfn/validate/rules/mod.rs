//! The rule families. Each module reports one kind of problem; `fields` also walks the
//! payload templates and path fields on behalf of `query_language`.

pub(crate) mod errors;
pub(crate) mod fields;
pub(crate) mod graph;
pub(crate) mod limits;
pub(crate) mod query_language;

use serde_json::Value;

use crate::sfn::asl::State;

/// A payload template of a state: field name, value, and whether `.$` keys in it are
/// evaluated (a Pass `Result` is a literal, so its `.$` keys are just names).
pub(crate) fn templates(state: &State) -> Vec<(&'static str, &Value, bool)> {
    let mut out: Vec<(&'static str, &Value, bool)> = Vec::new();
    fn push<'a>(
        out: &mut Vec<(&'static str, &'a Value, bool)>,
        name: &'static str,
        v: &'a Option<Value>,
        dynamic: bool,
    ) {
        if let Some(v) = v {
            out.push((name, v, dynamic));
        }
    }
    let mut add = |name, v, dynamic| push(&mut out, name, v, dynamic);
    match state {
        State::Task(s) => {
            add("Parameters", &s.parameters, true);
            add("ResultSelector", &s.result_selector, true);
        }
        State::Pass(s) => {
            add("Parameters", &s.parameters, true);
            add("Result", &s.result, false);
        }
        State::Map(s) => {
            add("ItemSelector", &s.item_selector, true);
            add("Parameters", &s.parameters, true);
            add("ResultSelector", &s.result_selector, true);
        }
        State::Parallel(s) => {
            add("Parameters", &s.parameters, true);
            add("ResultSelector", &s.result_selector, true);
        }
        State::Choice(_) | State::Wait(_) | State::Succeed(_) | State::Fail(_) => {}
    }
    out
}
