//! Service quotas that a definition can break statically: definition size, state-name length
//! and characters, unique state names, payload template size.

use std::collections::HashMap;

use super::templates;
use crate::diagnostic::pointer_token;
use crate::sfn::validate::scope::Scope;
use crate::sfn::validate::{Ctx, MAX_DEFINITION_BYTES, MAX_PAYLOAD_BYTES};

const MAX_STATE_NAME_CHARS: usize = 80;

pub(crate) fn definition_size(ctx: &mut Ctx<'_>, len: usize, what: &str) {
    if len > MAX_DEFINITION_BYTES {
        ctx.error(
            "ASL_DEFINITION_TOO_LARGE",
            String::new(),
            format!("the {what} definition is {len} bytes; Step Functions accepts at most {MAX_DEFINITION_BYTES}"),
            "move large literals out of the definition (pass them in the execution input or fetch them in a Task), or split the machine",
        );
    }
}

pub(crate) fn check(ctx: &mut Ctx<'_>, scopes: &[Scope<'_>]) {
    let mut first_seen: HashMap<&str, String> = HashMap::new();
    for scope in scopes {
        for (name, state) in scope.states {
            let ptr = scope.state_pointer(name);
            state_name(ctx, name, &ptr);
            match first_seen.get(name.as_str()) {
                Some(first) => ctx.error(
                    "ASL_DUPLICATE_STATE_NAME",
                    ptr.clone(),
                    format!("state name {name:?} is already used at {first}"),
                    "state names must be unique across the whole definition, including Parallel branches and Map processors; rename one",
                ),
                None => {
                    first_seen.insert(name, ptr.clone());
                }
            }
            for (field, value, _) in templates(state) {
                let size = serde_json::to_string(value).map(|s| s.len()).unwrap_or(0);
                if size > MAX_PAYLOAD_BYTES {
                    ctx.error(
                        "ASL_PAYLOAD_TEMPLATE_TOO_LARGE",
                        format!("{ptr}/{}", pointer_token(field)),
                        format!("{field} serialises to {size} bytes; a state payload may be at most {MAX_PAYLOAD_BYTES}"),
                        "keep large data out of the template: reference it with a path, or store it elsewhere and pass a key",
                    );
                }
            }
        }
    }
}

/// AWS documents 80 "characters". The count here is Unicode scalar values, as asl-validator
/// 4.0.0 does (its `^.{1,80}$` schema pattern runs with Ajv's unicode flag, so 80 emoji pass and
/// 81 fail — checked). A name over 80 UTF-16 code units is still flagged, at profile severity,
/// because a service measuring Java string length would see it as too long.
fn state_name(ctx: &mut Ctx<'_>, name: &str, ptr: &str) {
    let chars = name.chars().count();
    let utf16 = name.encode_utf16().count();
    if chars == 0 || chars > MAX_STATE_NAME_CHARS {
        ctx.error(
            "ASL_STATE_NAME",
            ptr.to_string(),
            format!("state name is {chars} characters; it must be 1 to {MAX_STATE_NAME_CHARS}"),
            "shorten the state name",
        );
    } else if utf16 > MAX_STATE_NAME_CHARS {
        let severity = ctx.profile_severity();
        ctx.emit(
            severity,
            "ASL_STATE_NAME",
            ptr.to_string(),
            format!(
                "state name is {chars} characters but {utf16} UTF-16 code units; tools that measure length in UTF-16 units (Java and JavaScript string lengths) count it as over 80"
            ),
            "shorten the name or replace characters outside the Basic Multilingual Plane (emoji, rare scripts)",
        );
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        ctx.error(
            "ASL_STATE_NAME",
            ptr.to_string(),
            format!(
                "state name contains the control character U+{:04X}",
                u32::from(c)
            ),
            "remove control characters (newlines, tabs, escapes) from the state name",
        );
    }
}
