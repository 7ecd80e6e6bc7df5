//! The JSONPath-without-variables profile. JSONata and workflow variables are valid ASL, but
//! the local executors this project tests with cannot run them, so the TPF driver profile
//! refuses them; for foreign definitions they are only flagged.

use crate::sfn::asl::StateMachine;
use crate::sfn::validate::Ctx;

pub(crate) const CODE: &str = "ASL_JSONATA_OR_VARIABLES";

/// Fields that exist only with JSONata or variables.
pub(crate) const JSONATA_FIELDS: &[&str] = &["Arguments", "Assign", "Condition", "Items", "Output"];

pub(crate) fn check(ctx: &mut Ctx<'_>, machine: &StateMachine) {
    if let Some(lang) = &machine.query_language {
        query_language(ctx, "/QueryLanguage".to_string(), lang);
    }
}

pub(crate) fn query_language(ctx: &mut Ctx<'_>, pointer: String, lang: &str) {
    if lang != "JSONPath" {
        let severity = ctx.profile_severity();
        ctx.emit(
            severity,
            CODE,
            pointer,
            format!("QueryLanguage is {lang:?}; this profile expects JSONPath"),
            "drop QueryLanguage (JSONPath is the default) and express the state with Parameters/ResultPath",
        );
    }
}

pub(crate) fn field(ctx: &mut Ctx<'_>, pointer: String, name: &str) {
    let severity = ctx.profile_severity();
    ctx.emit(
        severity,
        CODE,
        pointer,
        format!("`{name}` belongs to JSONata or workflow variables, which local executors cannot run"),
        "thread state through Parameters/ResultSelector/ResultPath instead of Assign/Arguments/Output",
    );
}

pub(crate) fn variable(ctx: &mut Ctx<'_>, pointer: String, path: &str) {
    let severity = ctx.profile_severity();
    ctx.emit(
        severity,
        CODE,
        pointer,
        format!("`{path}` reads a workflow variable, which local executors cannot run"),
        "read the value from the state input (`$.…`) and carry it there with ResultPath",
    );
}
