//! Reference checks over the exports: every CloudFormation `Ref`, `Fn::GetAtt`, `Fn::Sub`
//! variable and condition, and every Terraform interpolation names something the same document
//! declares. The exports are checked by these before they are written, and cfn-lint checks the
//! CloudFormation side again in the test command.

use serde_json::Value;

const PSEUDO_PARAMETERS: &[&str] = &[
    "AWS::AccountId",
    "AWS::NoValue",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
];

/// Every `Ref` / `Fn::GetAtt` / `Fn::Sub` target and condition name in a CloudFormation template
/// that the template does not declare.
pub fn unresolved_cloudformation_refs(template: &Value) -> Vec<String> {
    let keys = |section: &str| -> Vec<String> {
        template
            .get(section)
            .and_then(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let resources = keys("Resources");
    let parameters = keys("Parameters");
    let conditions = keys("Conditions");
    let referable = |name: &str| {
        resources.iter().any(|r| r == name)
            || parameters.iter().any(|p| p == name)
            || PSEUDO_PARAMETERS.contains(&name)
    };
    let mut missing = Vec::new();
    walk(template, &mut |v| {
        let Some(o) = v.as_object() else { return };
        if let Some(Value::String(r)) = o.get("Ref") {
            if !referable(r) {
                missing.push(r.clone());
            }
        }
        if let Some(Value::Array(a)) = o.get("Fn::GetAtt") {
            if let Some(Value::String(r)) = a.first() {
                if !resources.contains(r) {
                    missing.push(r.clone());
                }
            }
        }
        if let Some(sub) = o.get("Fn::Sub") {
            let (text, vars) = match sub {
                Value::String(s) => (s.as_str(), None),
                Value::Array(a) => (
                    a.first().and_then(Value::as_str).unwrap_or(""),
                    a.get(1).and_then(Value::as_object),
                ),
                _ => ("", None),
            };
            for name in sub_variables(text) {
                let base = name.split('.').next().unwrap_or(&name).to_string();
                let local = vars.is_some_and(|m| m.contains_key(&base));
                let ok = local
                    || if name.contains('.') && !name.starts_with("AWS::") {
                        resources.contains(&base)
                    } else {
                        referable(&name)
                    };
                if !ok {
                    missing.push(name);
                }
            }
        }
        if let Some(Value::Array(a)) = o.get("Fn::If") {
            if let Some(Value::String(c)) = a.first() {
                if !conditions.contains(c) {
                    missing.push(c.clone());
                }
            }
        }
        if let (Some(Value::String(c)), Some(_)) = (o.get("Condition"), o.get("Type")) {
            if !conditions.contains(c) {
                missing.push(c.clone());
            }
        }
    });
    missing
}

/// `${Name}` variables of an `Fn::Sub` string; `${!Literal}` is text, not a variable.
fn sub_variables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        if !name.starts_with('!') {
            out.push(name.trim().to_string());
        }
        rest = &after[end + 1..];
    }
    out
}

/// Every `${...}` reference in Terraform JSON that names no declared resource, data source or
/// variable, plus `depends_on` entries that name no resource.
pub fn unresolved_terraform_refs(config: &Value) -> Vec<String> {
    let declared = |section: &str, ty: &str, name: Option<&str>| {
        let t = config.get(section).and_then(|r| r.get(ty));
        match name {
            Some(n) => t.and_then(|t| t.get(n)).is_some(),
            None => t.is_some(),
        }
    };
    let mut missing = Vec::new();
    walk(config, &mut |v| {
        if let Some(s) = v.as_str() {
            for r in references(s) {
                let mut parts = r.split('.');
                let ok = match (parts.next(), parts.next(), parts.next()) {
                    (Some("var"), Some(name), _) => declared("variable", name, None),
                    (Some("local"), Some(name), _) => declared("locals", name, None),
                    (Some("data"), Some(ty), Some(name)) => declared("data", ty, Some(name)),
                    (Some(ty), Some(name), _) => declared("resource", ty, Some(name)),
                    _ => true,
                };
                if !ok {
                    missing.push(r);
                }
            }
        }
        if let Some(deps) = v.get("depends_on").and_then(Value::as_array) {
            for d in deps.iter().filter_map(Value::as_str) {
                let mut parts = d.split('.');
                if let (Some(ty), Some(name)) = (parts.next(), parts.next()) {
                    if !declared("resource", ty, Some(name)) {
                        missing.push(d.to_string());
                    }
                }
            }
        }
    });
    missing
}

/// `aws_*.name`, `var.x`, `local.x` and `data.t.n` references inside `${...}` (escaped `$${` is
/// literal and skipped).
fn references(s: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while let Some(pos) = s[i..].find("${") {
        let start = i + pos;
        i = start + 2;
        if start > 0 && bytes[start - 1] == b'$' {
            continue;
        }
        let Some(end) = s[i..].find('}') else { break };
        let expr = &s[i..i + end];
        for token in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
            let known = ["aws_", "var.", "local.", "data."]
                .iter()
                .any(|p| token.starts_with(p));
            if known && token.contains('.') {
                refs.push(token.trim_end_matches('.').to_string());
            }
        }
    }
    refs
}

fn walk(v: &Value, f: &mut dyn FnMut(&Value)) {
    f(v);
    match v {
        Value::Object(o) => o.values().for_each(|x| walk(x, f)),
        Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn terraform_references_are_found_and_escapes_skipped() {
        assert_eq!(
            references("x $${aws_a.b} ${aws_sfn_state_machine.driver.arn} ${var.v}"),
            vec!["aws_sfn_state_machine.driver.arn", "var.v"]
        );
    }

    #[test]
    fn unresolved_refs_are_reported() {
        let cf = json!({
            "Parameters": {"P": {}},
            "Conditions": {"C": {}},
            "Resources": {"A": {"Type": "T", "Condition": "Nope"}},
            "X": {"Ref": "B"}, "Y": {"Fn::GetAtt": ["A", "Arn"]}, "Z": {"Ref": "P"},
            "S": {"Fn::Sub": "${AWS::Region}:${P}:${A.Arn}:${!Literal}:${Q}"},
            "I": {"Fn::If": ["C", 1, {"Fn::If": ["D", 1, 2]}]}
        });
        assert_eq!(
            unresolved_cloudformation_refs(&cf),
            vec!["Nope", "B", "Q", "D"]
        );
        let tf = json!({
            "variable": {"v": {}},
            "data": {"aws_partition": {"current": {}}},
            "resource": {"aws_x": {"a": {
                "r": "${aws_x.b.id} ${var.v} ${var.w} ${data.aws_partition.current.partition}",
                "depends_on": ["aws_x.a"]
            }}}
        });
        assert_eq!(unresolved_terraform_refs(&tf), vec!["aws_x.b.id", "var.w"]);
    }
}
