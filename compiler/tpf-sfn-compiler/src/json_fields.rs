//! Typed, pointer-carrying reads of JSON objects, shared by the contract and release loaders.
//!
//! Both files are read by TPF's strict Jackson loader, so both loaders need the same things: a
//! JSON pointer on every complaint, every complaint collected rather than the first one thrown,
//! and unknown keys reported the way Jackson's `FAIL_ON_UNKNOWN_PROPERTIES` would.

use serde_json::{Map, Value};

use crate::diagnostic::{pointer_token, Diagnostic, Location};

/// The codes one input family uses for the generic shape problems.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldCodes {
    pub missing: &'static str,
    pub wrong_type: &'static str,
    pub unknown: &'static str,
    /// Why an unknown key is refused, for the hint: only what TPF's code shows about it.
    pub unknown_hint: &'static str,
}

pub(crate) struct FieldReader<'f> {
    pub file: &'f str,
    pub codes: FieldCodes,
    pub diags: Vec<Diagnostic>,
}

pub(crate) fn child(ptr: &str, key: &str) -> String {
    format!("{ptr}/{}", pointer_token(key))
}

pub(crate) fn item(ptr: &str, index: usize) -> String {
    format!("{ptr}/{index}")
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'f> FieldReader<'f> {
    pub fn new(file: &'f str, codes: FieldCodes) -> Self {
        FieldReader {
            file,
            codes,
            diags: Vec::new(),
        }
    }

    pub fn loc(&self, ptr: &str) -> Location {
        Location::pointer(self.file, ptr)
    }

    pub fn error(
        &mut self,
        code: &'static str,
        ptr: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let d = Diagnostic::error(code, self.loc(ptr), message).with_hint(hint);
        self.diags.push(d);
    }

    pub fn warning(
        &mut self,
        code: &'static str,
        ptr: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let d = Diagnostic::warning(code, self.loc(ptr), message).with_hint(hint);
        self.diags.push(d);
    }

    pub fn has_errors(&self) -> bool {
        self.diags.iter().any(Diagnostic::is_error)
    }

    fn wrong_type(&mut self, ptr: &str, key: &str, want: &str, got: &Value) {
        let code = self.codes.wrong_type;
        self.error(
            code,
            ptr,
            format!("`{key}` must be {want}, found {}", json_type(got)),
            format!("write `{key}` as {want}, as TPF's generator does"),
        );
    }

    fn missing(&mut self, ptr: &str, key: &str, want: &str) {
        let code = self.codes.missing;
        self.error(
            code,
            ptr,
            format!("required field `{key}` is missing or null"),
            format!("add `{key}` ({want}), as TPF's generator writes it"),
        );
    }

    /// Reports every key not in `allowed`. Jackson stops at the first; we list them all.
    pub fn reject_unknown(
        &mut self,
        obj: &Map<String, Value>,
        ptr: &str,
        allowed: &[&str],
        what: &str,
    ) {
        for key in obj.keys() {
            if !allowed.contains(&key.as_str()) {
                let code = self.codes.unknown;
                let why = self.codes.unknown_hint;
                self.error(
                    code,
                    &child(ptr, key),
                    format!("unknown {what} field `{key}`"),
                    format!(
                        "remove `{key}`: {why}; known fields are {}",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    /// Present and non-null value of `key`.
    fn present<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
        obj.get(key).filter(|v| !v.is_null())
    }

    pub fn str_req(&mut self, obj: &Map<String, Value>, ptr: &str, key: &str) -> Option<String> {
        let p = child(ptr, key);
        match Self::present(obj, key) {
            None => {
                self.missing(&p, key, "a string");
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.wrong_type(&p, key, "a string", other);
                None
            }
        }
    }

    /// A required string that must also contain something other than whitespace.
    pub fn str_nonblank(
        &mut self,
        obj: &Map<String, Value>,
        ptr: &str,
        key: &str,
        blank_code: &'static str,
    ) -> Option<String> {
        let s = self.str_req(obj, ptr, key)?;
        if s.trim().is_empty() {
            self.error(
                blank_code,
                &child(ptr, key),
                format!("`{key}` is blank"),
                format!("give `{key}` a non-blank value; TPF rejects blank values here"),
            );
            return None;
        }
        Some(s)
    }

    pub fn str_opt(&mut self, obj: &Map<String, Value>, ptr: &str, key: &str) -> Option<String> {
        match Self::present(obj, key) {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.wrong_type(&child(ptr, key), key, "a string", other);
                None
            }
        }
    }

    pub fn bool_opt(&mut self, obj: &Map<String, Value>, ptr: &str, key: &str) -> Option<bool> {
        match Self::present(obj, key) {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.wrong_type(&child(ptr, key), key, "a boolean", other);
                None
            }
        }
    }

    /// An integer, if present; `Err(())` when present but not an integer (already reported).
    pub fn int_opt(
        &mut self,
        obj: &Map<String, Value>,
        ptr: &str,
        key: &str,
    ) -> Result<Option<i64>, ()> {
        match Self::present(obj, key) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) => Ok(Some(n)),
                None => {
                    self.wrong_type(&child(ptr, key), key, "an integer", v);
                    Err(())
                }
            },
        }
    }

    pub fn int_req(&mut self, obj: &Map<String, Value>, ptr: &str, key: &str) -> Option<i64> {
        match self.int_opt(obj, ptr, key) {
            Ok(Some(n)) => Some(n),
            Ok(None) => {
                self.missing(&child(ptr, key), key, "an integer");
                None
            }
            Err(()) => None,
        }
    }

    pub fn array_opt<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        ptr: &str,
        key: &str,
    ) -> Option<&'v Vec<Value>> {
        match Self::present(obj, key) {
            None => None,
            Some(Value::Array(a)) => Some(a),
            Some(other) => {
                self.wrong_type(&child(ptr, key), key, "an array", other);
                None
            }
        }
    }

    pub fn object_opt<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        ptr: &str,
        key: &str,
    ) -> Option<&'v Map<String, Value>> {
        match Self::present(obj, key) {
            None => None,
            Some(Value::Object(o)) => Some(o),
            Some(other) => {
                self.wrong_type(&child(ptr, key), key, "an object", other);
                None
            }
        }
    }

    /// An array element that must be an object (steps, artifacts, nodes ...).
    pub fn element_object<'v>(
        &mut self,
        v: &'v Value,
        ptr: &str,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(o) => Some(o),
            other => {
                let code = self.codes.wrong_type;
                self.error(
                    code,
                    ptr,
                    format!("{what} must be an object, found {}", json_type(other)),
                    format!("write each {what} as a JSON object"),
                );
                None
            }
        }
    }

    pub fn str_array_opt(
        &mut self,
        obj: &Map<String, Value>,
        ptr: &str,
        key: &str,
    ) -> Option<Vec<String>> {
        let arr = self.array_opt(obj, ptr, key)?;
        let base = child(ptr, key);
        let mut out = Vec::with_capacity(arr.len());
        for (i, v) in arr.iter().enumerate() {
            match v {
                Value::String(s) => out.push(s.clone()),
                other => {
                    let code = self.codes.wrong_type;
                    self.error(
                        code,
                        &item(&base, i),
                        format!(
                            "`{key}` entries must be strings, found {}",
                            json_type(other)
                        ),
                        format!("write every `{key}` entry as a string"),
                    );
                }
            }
        }
        Some(out)
    }
}
