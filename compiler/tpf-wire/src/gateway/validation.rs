//! `AwsDurableValidation`, TPF's only two record rules, and the generation rule every record
//! with a generation repeats. There are no length limits and no patterns.

use crate::java_error::JavaError;
use crate::java_text::is_java_blank;

/// `required(value, name)`: non-null (`NullPointerException(name)`), then not blank by Java's
/// `isBlank` (`IllegalArgumentException("<name> must not be blank")`).
pub fn required<'a>(value: Option<&'a str>, name: &str) -> Result<&'a str, JavaError> {
    let value = value.ok_or_else(|| JavaError::null_pointer(name))?;
    if is_java_blank(value) {
        return Err(JavaError::illegal_argument(format!(
            "{name} must not be blank"
        )));
    }
    Ok(value)
}

/// `optional(value, name)` over an `Optional` that is never null: empty passes, a present value
/// must pass [`required`].
pub fn optional(value: Option<&str>, name: &str) -> Result<(), JavaError> {
    match value {
        Some(v) => required(Some(v), name).map(|_| ()),
        None => Ok(()),
    }
}

/// `if (generation < 1) throw new IllegalArgumentException("generation must be positive")`.
pub fn positive_generation(generation: i64) -> Result<(), JavaError> {
    if generation < 1 {
        return Err(JavaError::illegal_argument("generation must be positive"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_rules_and_their_messages() {
        assert_eq!(required(Some("a"), "x"), Ok("a"));
        assert_eq!(
            required(None, "tenantId").unwrap_err().to_string(),
            "NullPointerException: tenantId"
        );
        assert_eq!(
            required(Some(" \u{2028}"), "tenantId")
                .unwrap_err()
                .to_string(),
            "IllegalArgumentException: tenantId must not be blank"
        );
        // U+00A0 is no Java whitespace: the value is not blank.
        assert!(required(Some("\u{a0}"), "x").is_ok());
        assert!(optional(None, "x").is_ok());
        assert!(optional(Some(""), "x").is_err());
        assert!(positive_generation(1).is_ok());
        assert!(positive_generation(0).is_err() && positive_generation(-5).is_err());
    }
}
