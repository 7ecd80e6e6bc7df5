//! Awaits that are the same await up to their name, so the per-await scenario families need to
//! run on one of them only. The key is the plan's facts about the await, plus what the
//! program under proof makes of it (`Program::await_key`): the Step Functions machines add the
//! driver's state for it, read from the driver under proof (which may be a user's edited
//! definition), so a state changed by hand no longer matches its siblings and is run on its
//! own; a durable driver's program is the same code for every await, so its classes follow from
//! the plan alone.

use serde::Serialize;
use serde_json::Value;
use tpf_sfn_compiler::plan::AwaitPoint;

use crate::subject::{Program, Subject};

/// One class of interchangeable awaits, in contract order.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AwaitClass {
    /// Plan indices of the awaits in the class.
    #[serde(skip)]
    pub members: Vec<usize>,
    /// Authored names of the members the per-await families run on.
    pub representatives: Vec<String>,
    pub awaits: usize,
    /// Authored names of every member, so the report hides none.
    #[serde(rename = "members")]
    pub member_names: Vec<String>,
}

/// The classes of a subject's awaits and the awaits the per-await families run on.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AwaitClasses {
    pub awaits: usize,
    pub classes: Vec<AwaitClass>,
    /// Plan indices the per-await families run on, ascending.
    #[serde(skip)]
    pub representatives: Vec<usize>,
}

/// Replaces the await's own names where a string is exactly one of them, so two states that
/// differ only by which step they serve compare equal. Only whole strings: a name inside a
/// longer string stays, which can only split a class, never merge two.
pub(crate) fn anonymise(v: &mut Value, names: &[&str]) {
    let own = |s: &str| names.contains(&s);
    match v {
        Value::String(s) if own(s) => *s = "<await>".to_string(),
        Value::Array(a) => a.iter_mut().for_each(|x| anonymise(x, names)),
        Value::Object(o) => {
            let entries = std::mem::take(o);
            for (k, mut x) in entries {
                anonymise(&mut x, names);
                o.insert(if own(&k) { "<await>".to_string() } else { k }, x);
            }
        }
        _ => {}
    }
}

/// What must be equal for two awaits to be interchangeable: the plan's facts about the await
/// and the program's part. `None` when the await cannot share a class: an itemized await (its
/// continuation steps differ by position) or one the program says cannot.
fn key<P: Program>(subject: &Subject<P>, k: usize, a: &AwaitPoint) -> Option<String> {
    if a.itemized {
        return None;
    }
    let program = subject.program.await_key(k, a)?;
    let facts = serde_json::json!({
        "kind": a.kind,
        "cardinality": a.cardinality,
        "cardinalityRaw": a.cardinality_raw,
        "transport": a.transport,
        "ingress": a.ingress,
        "state": program,
    });
    Some(facts.to_string())
}

pub fn classify<P: Program>(subject: &Subject<P>) -> AwaitClasses {
    let awaits = &subject.plan.awaits;
    let mut classes: Vec<(Option<String>, AwaitClass)> = Vec::new();
    for (k, a) in awaits.iter().enumerate() {
        let key = key(subject, k, a);
        match classes
            .iter_mut()
            .find(|(c, _)| key.is_some() && c.as_ref() == key.as_ref())
        {
            Some((_, class)) => class.members.push(k),
            None => classes.push((
                key,
                AwaitClass {
                    members: vec![k],
                    representatives: Vec::new(),
                    awaits: 0,
                    member_names: Vec::new(),
                },
            )),
        }
    }
    // Each class's first member, plus the contract's first and last await: the first parks
    // with nothing before it, the last is the one a too-short horizon would cut off.
    let mut representatives: Vec<usize> = classes.iter().map(|(_, c)| c.members[0]).collect();
    if let Some(last) = awaits.len().checked_sub(1) {
        representatives.push(last);
    }
    representatives.sort_unstable();
    representatives.dedup();
    let classes = classes
        .into_iter()
        .map(|(_, mut c)| {
            c.awaits = c.members.len();
            c.member_names = c
                .members
                .iter()
                .map(|&m| awaits[m].authored_name.clone())
                .collect();
            c.representatives = c
                .members
                .iter()
                .filter(|m| representatives.contains(m))
                .map(|&m| awaits[m].authored_name.clone())
                .collect();
            c
        })
        .collect();
    AwaitClasses {
        awaits: awaits.len(),
        classes,
        representatives,
    }
}

#[cfg(test)]
mod tests {
    use super::anonymise;
    use serde_json::json;

    #[test]
    fn only_whole_names_are_replaced() {
        let mut v = json!({"Next": "Await A", "Await A": ["Await A", "Await AB", "after Await A"]});
        anonymise(&mut v, &["Await A"]);
        assert_eq!(
            v,
            json!({"Next": "<await>", "<await>": ["<await>", "Await AB", "after Await A"]})
        );
    }
}
