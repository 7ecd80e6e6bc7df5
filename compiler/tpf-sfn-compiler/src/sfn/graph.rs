//! Mermaid flowcharts of state machines: the picture the console draws, in a file that renders
//! on GitHub and in docs, with Choice edges labelled by their condition.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::Value;

use crate::sfn::asl::{ChoiceRule, State, StateMachine, SubMachine, Transition};

/// Renders `machine` as a `flowchart TD`. Node ids are positional (`s0`, `s1`, …) because state
/// names may hold any character; labels carry the names.
pub fn mermaid(machine: &StateMachine) -> String {
    let mut out = String::from("flowchart TD\n");
    let mut ids = Ids::default();
    let _ = writeln!(out, "    start(( )) --> {}", ids.id(&machine.start_at));
    body(&mut out, &mut ids, &machine.states, "    ");
    out
}

#[derive(Default)]
struct Ids {
    by_name: HashMap<String, String>,
}

impl Ids {
    fn id(&mut self, name: &str) -> String {
        let next = format!("s{}", self.by_name.len());
        self.by_name.entry(name.to_string()).or_insert(next).clone()
    }
}

fn body(out: &mut String, ids: &mut Ids, states: &indexmap::IndexMap<String, State>, indent: &str) {
    for (name, state) in states {
        let id = ids.id(name);
        let label = escape(name);
        let node = match state {
            State::Choice(_) => format!("{id}{{\"{label}\"}}"),
            State::Wait(_) => format!("{id}([\"{label}\"])"),
            State::Succeed(_) => format!("{id}((\"{label}\"))"),
            State::Fail(_) => format!("{id}[[\"{label}\"]]"),
            State::Map(m) => {
                let _ = writeln!(
                    out,
                    "{indent}subgraph {id}_each[\"{label} (for each item)\"]"
                );
                if let Some(p) = m.processor() {
                    sub(out, ids, p, &format!("{indent}    "));
                }
                let _ = writeln!(out, "{indent}end");
                format!("{id}[/\"{label}\"/]")
            }
            State::Parallel(p) => {
                for (i, b) in p.branches.iter().enumerate() {
                    let _ = writeln!(out, "{indent}subgraph {id}_b{i}[\"{label}: branch {i}\"]");
                    sub(out, ids, b, &format!("{indent}    "));
                    let _ = writeln!(out, "{indent}end");
                }
                format!("{id}[/\"{label}\"/]")
            }
            State::Task(_) | State::Pass(_) => format!("{id}[\"{label}\"]"),
        };
        let _ = writeln!(out, "{indent}{node}");
        if let Some(Transition::Next(n)) = state.transition() {
            let _ = writeln!(out, "{indent}{id} --> {}", ids.id(n));
        }
        if let State::Choice(c) = state {
            for rule in &c.choices {
                if let Some(n) = &rule.next {
                    let _ = writeln!(
                        out,
                        "{indent}{id} -- \"{}\" --> {}",
                        escape(&describe(rule)),
                        ids.id(n)
                    );
                }
            }
            if let Some(d) = &c.default {
                let _ = writeln!(out, "{indent}{id} -. otherwise .-> {}", ids.id(d));
            }
        }
        for c in state.catchers() {
            let _ = writeln!(
                out,
                "{indent}{id} -. \"{}\" .-> {}",
                escape(&c.error_equals.join(", ")),
                ids.id(&c.next)
            );
        }
    }
}

fn sub(out: &mut String, ids: &mut Ids, m: &SubMachine, indent: &str) {
    let _ = writeln!(
        out,
        "{indent}{}_start(( )) --> {}",
        ids.id(&m.start_at),
        ids.id(&m.start_at)
    );
    body(out, ids, &m.states, indent);
}

/// A short reading of a Choice rule: `status = SUCCEEDED`, `iteration >= 500`.
pub fn describe(rule: &ChoiceRule) -> String {
    if let Some(all) = &rule.and {
        return all.iter().map(describe).collect::<Vec<_>>().join(" and ");
    }
    if let Some(any) = &rule.or {
        return format!(
            "({})",
            any.iter().map(describe).collect::<Vec<_>>().join(" or ")
        );
    }
    if let Some(not) = &rule.not {
        return format!("not {}", describe(not));
    }
    let var = rule.variable.as_deref().unwrap_or("?");
    let var = var.rsplit('.').next().unwrap_or(var);
    let Some((op, operand)) = rule.comparison.iter().next() else {
        return var.to_string();
    };
    let shown = match operand {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let symbol = match op.trim_end_matches("Path") {
        "StringEquals" | "NumericEquals" | "BooleanEquals" | "TimestampEquals" => "=",
        "NumericGreaterThanEquals" | "StringGreaterThanEquals" | "TimestampGreaterThanEquals" => {
            ">="
        }
        "NumericGreaterThan" | "StringGreaterThan" | "TimestampGreaterThan" => ">",
        "NumericLessThanEquals" | "StringLessThanEquals" | "TimestampLessThanEquals" => "<=",
        "NumericLessThan" | "StringLessThan" | "TimestampLessThan" => "<",
        "StringMatches" => "matches",
        "IsPresent" => {
            return if shown == "true" {
                format!("{var} present")
            } else {
                format!("{var} absent")
            }
        }
        "IsTimestamp" => return format!("{var} is a timestamp"),
        _ => op.as_str(),
    };
    format!("{var} {symbol} {shown}")
}

fn escape(text: &str) -> String {
    text.replace('"', "#quot;").replace('\n', " ")
}
