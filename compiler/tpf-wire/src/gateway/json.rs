//! How Jackson binds the gateway's JSON to TPF's records, in the two configurations that meet
//! on the wire:
//!
//! - [`Mapper::Server`], the action Lambda's Quarkus mapper: unknown keys ignored
//!   (`FAIL_ON_UNKNOWN_PROPERTIES` off), key names matched case-insensitively
//!   (`ACCEPT_CASE_INSENSITIVE_PROPERTIES`), enum values matched exactly;
//! - [`Mapper::Caller`], TPF's caller (`new ObjectMapper()` + jdk8 module): exact key names, an
//!   unknown key fails;
//! - [`Mapper::Durable`], the coordinator function's SerDes (jdk8 and JavaTime modules,
//!   `FAIL_ON_UNKNOWN_PROPERTIES` off): exact key names, unknown keys ignored.
//!
//! Both keep Jackson's default scalar coercions: a number or boolean read as text is its text, a
//! numeric string read as a number is parsed, a fraction read as an integer is truncated, `null`
//! read as a primitive is its zero. Properties are bound in document order, so the first bad
//! value in the document is the one reported; a record's own rules run when its object ends.

use serde_json::Value;

use super::operation::Operation;
use crate::java_error::{class, JavaError};

/// Which of the two mappers reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapper {
    Server,
    Caller,
    Durable,
}

impl Mapper {
    fn matches(self, declared: &str, key: &str) -> bool {
        match self {
            Self::Server => declared.to_lowercase() == key.to_lowercase(),
            Self::Caller | Self::Durable => declared == key,
        }
    }
}

/// What Java type a property binds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `String` or `Optional<String>`.
    Text,
    /// `long` or `Optional<Long>`.
    Long,
    /// `boolean`.
    Bool,
    /// `AwsDurableOperation`.
    Operation,
    /// A nested record, read by the given function.
    Nested,
    /// `List<…>` of a nested record.
    List,
}

/// One bound property value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot<'a> {
    Text(Option<String>),
    Long(Option<i64>),
    Bool(bool),
    Operation(Option<Operation>),
    /// The raw value of a nested record or list (`None` for JSON null); its reader binds it.
    Raw(Option<&'a Value>),
}

fn token(value: &Value) -> (&'static str, &'static str) {
    match value {
        Value::Null => ("Null value", "VALUE_NULL"),
        Value::Bool(true) => ("Boolean value", "VALUE_TRUE"),
        Value::Bool(false) => ("Boolean value", "VALUE_FALSE"),
        Value::Number(n) if n.is_f64() => ("Floating-point value", "VALUE_NUMBER_FLOAT"),
        Value::Number(_) => ("Integer value", "VALUE_NUMBER_INT"),
        Value::String(_) => ("String value", "VALUE_STRING"),
        Value::Array(_) => ("Array value", "START_ARRAY"),
        Value::Object(_) => ("Object value", "START_OBJECT"),
    }
}

/// Jackson's `MismatchedInputException` for a token the target type cannot start from.
pub(crate) fn mismatched(java_type: &str, value: &Value) -> JavaError {
    let (what, tok) = token(value);
    JavaError::new(
        class::MISMATCHED_INPUT,
        format!(
            "Cannot deserialize value of type `{java_type}` from {what} (token `JsonToken.{tok}`)"
        ),
    )
}

/// Jackson's `ValueInstantiationException` around a record constructor's exception.
pub(crate) fn instantiation(record_class: &str, cause: JavaError) -> JavaError {
    JavaError::new(
        class::VALUE_INSTANTIATION,
        format!(
            "Cannot construct instance of `{record_class}`, problem: {}",
            cause.message
        ),
    )
    .caused_by(cause)
}

/// Parses the document text (Jackson's `JsonParseException` for text that is no JSON).
pub(crate) fn parse(text: &str) -> Result<Value, JavaError> {
    serde_json::from_str(text).map_err(|e| JavaError::new(class::JSON_PARSE, e.to_string()))
}

fn text(value: &Value) -> Result<Option<String>, JavaError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        other => Err(mismatched("java.lang.String", other)),
    }
}

fn out_of_range(shown: &str) -> JavaError {
    JavaError::new(
        class::INPUT_COERCION,
        format!(
            "Numeric value ({shown}) out of range of long ({} - {})",
            i64::MIN,
            i64::MAX
        ),
    )
}

fn long(value: &Value) -> Result<Option<i64>, JavaError> {
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Some(i))
            } else if n.is_u64() {
                Err(out_of_range(&n.to_string()))
            } else {
                // ACCEPT_FLOAT_AS_INT: the fraction is dropped.
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.is_finite() && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                    Ok(Some(f.trunc() as i64))
                } else {
                    Err(out_of_range(&n.to_string()))
                }
            }
        }
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<i64>().map(Some).map_err(|_| {
                JavaError::new(
                    class::INVALID_FORMAT,
                    format!(
                        "Cannot deserialize value of type `long` from String \"{s}\": not a valid `long` value"
                    ),
                )
            })
        }
        other => Err(mismatched("long", other)),
    }
}

fn boolean(value: &Value) -> Result<bool, JavaError> {
    match value {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if !n.is_f64() => Ok(n.as_i64() != Some(0)),
        Value::String(s) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.trim().eq_ignore_ascii_case("false") || s.trim().is_empty() => {
            Ok(false)
        }
        Value::String(s) => Err(JavaError::new(
            class::INVALID_FORMAT,
            format!(
                "Cannot deserialize value of type `boolean` from String \"{s}\": only \"true\" or \"false\" recognized"
            ),
        )),
        other => Err(mismatched("boolean", other)),
    }
}

fn operation(value: &Value) -> Result<Option<Operation>, JavaError> {
    const JAVA: &str = "org.pipelineframework.aws.durable.model.AwsDurableOperation";
    let names = || {
        Operation::ALL
            .iter()
            .map(|o| o.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Operation::parse(s).map(Some).ok_or_else(|| {
            JavaError::new(
                class::INVALID_FORMAT,
                format!(
                    "Cannot deserialize value of type `{JAVA}` from String \"{s}\": not one of the values accepted for Enum class: [{}]",
                    names()
                ),
            )
        }),
        // FAIL_ON_NUMBERS_FOR_ENUMS is off: an integer is the ordinal.
        Value::Number(n) if !n.is_f64() => n
            .as_u64()
            .and_then(|i| Operation::ALL.get(usize::try_from(i).ok()?).copied())
            .map(Some)
            .ok_or_else(|| {
                JavaError::new(
                    class::INVALID_FORMAT,
                    format!(
                        "Cannot deserialize value of type `{JAVA}` from number {n}: index value outside legal index range [0..{}]",
                        Operation::ALL.len() - 1
                    ),
                )
            }),
        other => Err(mismatched(JAVA, other)),
    }
}

fn slot(kind: Kind, value: &Value) -> Result<Slot<'_>, JavaError> {
    Ok(match kind {
        Kind::Text => Slot::Text(text(value)?),
        Kind::Long => Slot::Long(long(value)?),
        Kind::Bool => Slot::Bool(boolean(value)?),
        Kind::Operation => Slot::Operation(operation(value)?),
        Kind::Nested | Kind::List => Slot::Raw((!value.is_null()).then_some(value)),
    })
}

/// The properties of one record, bound. `get` answers the slot of a property by its declared
/// name; an absent property is its Java default (null, 0, false).
pub(crate) struct Bound<'a> {
    props: &'static [(&'static str, Kind)],
    slots: Vec<Option<Slot<'a>>>,
}

impl<'a> Bound<'a> {
    fn at(&self, name: &str) -> Option<&Slot<'a>> {
        let i = self.props.iter().position(|(n, _)| *n == name)?;
        self.slots[i].as_ref()
    }

    pub(crate) fn text(&self, name: &str) -> Option<String> {
        match self.at(name) {
            Some(Slot::Text(t)) => t.clone(),
            _ => None,
        }
    }

    pub(crate) fn long(&self, name: &str) -> Option<i64> {
        match self.at(name) {
            Some(Slot::Long(l)) => *l,
            _ => None,
        }
    }

    pub(crate) fn boolean(&self, name: &str) -> bool {
        matches!(self.at(name), Some(Slot::Bool(true)))
    }

    pub(crate) fn operation(&self, name: &str) -> Option<Operation> {
        match self.at(name) {
            Some(Slot::Operation(o)) => *o,
            _ => None,
        }
    }

    pub(crate) fn raw(&self, name: &str) -> Option<&'a Value> {
        match self.at(name) {
            Some(Slot::Raw(v)) => *v,
            _ => None,
        }
    }
}

/// Binds `value` as the record `record_class` with the declared `props`, in document order.
/// `nested` binds a nested record or list property as soon as it is read, so its errors come
/// in document order too.
pub(crate) fn bind<'a>(
    value: &'a Value,
    record_class: &'static str,
    props: &'static [(&'static str, Kind)],
    mapper: Mapper,
    nested: &mut dyn FnMut(&str, &'a Value) -> Result<(), JavaError>,
) -> Result<Bound<'a>, JavaError> {
    let Value::Object(map) = value else {
        return Err(mismatched(record_class, value));
    };
    let mut slots: Vec<Option<Slot<'a>>> = vec![None; props.len()];
    for (key, v) in map {
        let found = props.iter().position(|(name, _)| mapper.matches(name, key));
        let Some(i) = found else {
            if mapper == Mapper::Caller {
                let known: Vec<String> = props.iter().map(|(n, _)| format!("\"{n}\"")).collect();
                return Err(JavaError::new(
                    class::UNRECOGNIZED_PROPERTY,
                    format!(
                        "Unrecognized field \"{key}\" (class {record_class}), not marked as ignorable ({} known properties: {})",
                        props.len(),
                        known.join(", ")
                    ),
                ));
            }
            continue;
        };
        let (name, kind) = props[i];
        let s = slot(kind, v)?;
        if let Slot::Raw(Some(raw)) = s {
            nested(name, raw)?;
        }
        slots[i] = Some(s);
    }
    Ok(Bound { props, slots })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PROPS: &[(&str, Kind)] = &[("tenantId", Kind::Text), ("generation", Kind::Long)];

    #[test]
    fn server_reads_keys_case_insensitively_and_ignores_unknown_ones() {
        let v = json!({"TENANTID": "t", "GeNeRaTiOn": "7", "extra": [1]});
        let b = bind(&v, "R", PROPS, Mapper::Server, &mut |_, _| Ok(())).unwrap();
        assert_eq!(b.text("tenantId").as_deref(), Some("t"));
        assert_eq!(b.long("generation"), Some(7));
    }

    #[test]
    fn caller_reads_exact_keys_and_fails_on_unknown_ones() {
        let v = json!({"tenantId": "t", "TenantId": "u"});
        let e = bind(&v, "R", PROPS, Mapper::Caller, &mut |_, _| Ok(()))
            .err()
            .unwrap();
        assert_eq!(e.class, class::UNRECOGNIZED_PROPERTY);
    }

    #[test]
    fn scalar_coercions_follow_jackson_defaults() {
        assert_eq!(long(&json!(2.9)).unwrap(), Some(2));
        assert_eq!(long(&json!(null)).unwrap(), None);
        assert_eq!(
            long(&json!(u64::MAX)).unwrap_err().class,
            class::INPUT_COERCION
        );
        assert_eq!(long(&json!("x")).unwrap_err().class, class::INVALID_FORMAT);
        assert_eq!(long(&json!({})).unwrap_err().class, class::MISMATCHED_INPUT);
        assert_eq!(text(&json!(12)).unwrap().as_deref(), Some("12"));
        assert_eq!(text(&json!([])).unwrap_err().class, class::MISMATCHED_INPUT);
        assert!(boolean(&json!(1)).unwrap() && !boolean(&json!(null)).unwrap());
        assert_eq!(operation(&json!(1)).unwrap(), Some(Operation::Status));
        assert_eq!(
            operation(&json!("status")).unwrap_err().class,
            class::INVALID_FORMAT
        );
        assert_eq!(
            operation(&json!(10)).unwrap_err().class,
            class::INVALID_FORMAT
        );
    }
}
