//! What `deploy` would do to one machine, decided from what is deployed — pure, no AWS calls.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::release::{LoggingView, Machine};

/// A deployed machine, as read back from Step Functions.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployed {
    pub arn: String,
    pub definition: String,
    pub role_arn: String,
    pub logging: LoggingState,
    pub tracing: bool,
    pub tags: BTreeMap<String, String>,
}

/// Logging as comparable values: an absent configuration is level OFF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingState {
    pub level: String,
    pub include_execution_data: bool,
    pub log_group_arn: Option<String>,
}

impl LoggingState {
    pub fn off() -> Self {
        Self {
            level: "OFF".to_string(),
            include_execution_data: false,
            log_group_arn: None,
        }
    }

    pub fn from_manifest(l: &LoggingView) -> Self {
        if !l.enabled() {
            return Self::off();
        }
        Self {
            level: l.level.to_ascii_uppercase(),
            include_execution_data: l.include_execution_data,
            log_group_arn: l.log_group_arn.clone(),
        }
    }

    /// OFF ignores the other fields: Step Functions keeps them but does not log.
    fn same_as(&self, other: &Self) -> bool {
        if self.level == "OFF" && other.level == "OFF" {
            return true;
        }
        self == other
    }
}

/// What a deploy does (or, with `--dry-run`, would do) to one machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    Create,
    Unchanged,
    /// Same definition; tags, logging, tracing or role differ. Safe: executions keep running the
    /// same states.
    Update {
        tags: Vec<String>,
        settings: Vec<String>,
    },
    /// Different definition on an existing release machine, not forced.
    Refuse {
        diff: Vec<String>,
    },
    /// Different definition, `--force-replace`.
    Replace {
        diff: Vec<String>,
        tags: Vec<String>,
    },
}

impl Action {
    pub fn writes(&self) -> bool {
        !matches!(self, Action::Unchanged | Action::Refuse { .. })
    }
}

/// The desired state of one machine beyond its definition.
#[derive(Debug, Clone)]
pub struct Desired<'a> {
    pub machine: &'a Machine,
    pub logging: LoggingState,
    pub tracing: bool,
    /// `None` in a dry run without `--role-arn`: the role is then not compared.
    pub role_arn: Option<&'a str>,
}

pub fn plan(desired: &Desired<'_>, deployed: Option<&Deployed>, force: bool) -> Action {
    let Some(d) = deployed else {
        return Action::Create;
    };
    let tags = tag_updates(&desired.machine.tags, &d.tags);
    let diff = definition_diff(&d.definition, &desired.machine.definition);
    if !diff.is_empty() {
        return if force {
            Action::Replace { diff, tags }
        } else {
            Action::Refuse { diff }
        };
    }
    let mut settings = Vec::new();
    if !desired.logging.same_as(&d.logging) {
        settings.push(format!(
            "logging {} → {}",
            d.logging.level, desired.logging.level
        ));
    }
    if desired.tracing != d.tracing {
        settings.push(format!("tracing {} → {}", d.tracing, desired.tracing));
    }
    if let Some(role) = desired.role_arn {
        if role != d.role_arn {
            settings.push(format!("role {} → {role}", d.role_arn));
        }
    }
    if tags.is_empty() && settings.is_empty() {
        Action::Unchanged
    } else {
        Action::Update { tags, settings }
    }
}

/// Keys whose value must be set. Tags someone else added are left alone: they are not ours.
pub fn tag_updates(
    desired: &BTreeMap<String, String>,
    deployed: &BTreeMap<String, String>,
) -> Vec<String> {
    desired
        .iter()
        .filter(|(k, v)| deployed.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect()
}

const MAX_DIFF_LINES: usize = 60;

/// A readable, semantic diff of two definitions: both are parsed and compared as JSON values, so
/// formatting and key order never count. Lines name states and fields:
/// `~ States."Wait for lease".Seconds: 30 → 5`, `+ States."New state"`, `- States."Old state"`.
pub fn definition_diff(deployed: &str, ours: &Value) -> Vec<String> {
    match serde_json::from_str::<Value>(deployed) {
        Ok(old) => {
            let mut out = Vec::new();
            diff_values("", &old, ours, &mut out);
            if out.len() > MAX_DIFF_LINES {
                let more = out.len() - MAX_DIFF_LINES;
                out.truncate(MAX_DIFF_LINES);
                out.push(format!("… and {more} more differences"));
            }
            out
        }
        Err(_) => vec!["~ the deployed definition is not JSON; it differs entirely".to_string()],
    }
}

fn diff_values(path: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = join(path, k);
                match b.get(k) {
                    Some(vb) => diff_values(&p, va, vb, out),
                    None => out.push(format!("- {p}")),
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("+ {}", join(path, k)));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff_values(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if old == new => {}
        _ => out.push(format!(
            "~ {}: {} → {}",
            if path.is_empty() { "(root)" } else { path },
            short(old),
            short(new)
        )),
    }
}

fn join(path: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if simple {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    };
    if path.is_empty() {
        key
    } else {
        format!("{path}.{key}")
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let head: String = s.chars().take(77).collect();
        format!("{head}…")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn machine(def: Value) -> Machine {
        Machine {
            role: "driver",
            name: "m".into(),
            definition_text: def.to_string(),
            definition: def,
            sha256: "h".into(),
            tags: BTreeMap::from([("tpf-sfn:role".to_string(), "driver".to_string())]),
        }
    }

    fn deployed(def: &str) -> Deployed {
        Deployed {
            arn: "arn".into(),
            definition: def.into(),
            role_arn: "r".into(),
            logging: LoggingState::off(),
            tracing: false,
            tags: BTreeMap::from([("tpf-sfn:role".to_string(), "driver".to_string())]),
        }
    }

    #[test]
    fn key_order_and_whitespace_do_not_count() {
        let m = machine(json!({"StartAt": "A", "States": {"A": {"Type": "Succeed"}}}));
        let d = deployed(r#"{ "States": {"A": {"Type":"Succeed"}},   "StartAt":"A" }"#);
        let desired = Desired {
            machine: &m,
            logging: LoggingState::off(),
            tracing: false,
            role_arn: Some("r"),
        };
        assert_eq!(plan(&desired, Some(&d), false), Action::Unchanged);
    }

    #[test]
    fn diff_names_states_and_fields() {
        let old =
            r#"{"States": {"Wait": {"Type": "Wait", "Seconds": 30}, "Gone": {"Type": "Pass"}}}"#;
        let new = json!({"States": {"Wait": {"Type": "Wait", "Seconds": 5}, "Await: Approval": {"Type": "Task"}}});
        let d = definition_diff(old, &new);
        assert_eq!(
            d,
            vec![
                "~ States.Wait.Seconds: 30 → 5",
                "- States.Gone",
                "+ States.\"Await: Approval\""
            ]
        );
    }

    #[test]
    fn refuses_unless_forced_and_updates_tags_only_when_safe() {
        let m = machine(json!({"StartAt": "B"}));
        let d = deployed(r#"{"StartAt": "A"}"#);
        let desired = Desired {
            machine: &m,
            logging: LoggingState::off(),
            tracing: true,
            role_arn: None,
        };
        assert!(matches!(
            plan(&desired, Some(&d), false),
            Action::Refuse { .. }
        ));
        assert!(matches!(
            plan(&desired, Some(&d), true),
            Action::Replace { .. }
        ));
        let same = deployed(r#"{"StartAt": "B"}"#);
        assert_eq!(
            plan(&desired, Some(&same), false),
            Action::Update {
                tags: vec![],
                settings: vec!["tracing false → true".into()]
            }
        );
    }

    #[test]
    fn logging_off_equals_absent_and_bad_json_is_a_difference() {
        let on = LoggingState {
            level: "OFF".into(),
            include_execution_data: true,
            log_group_arn: Some("x".into()),
        };
        assert!(on.same_as(&LoggingState::off()));
        assert_eq!(definition_diff("not json", &json!({})).len(), 1);
    }
}
