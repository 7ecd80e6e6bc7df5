//! A failure as TPF's Java code reports it: the exception's class and message, and the exception
//! it wraps. TPF has no error codes of its own on these paths; what a caller sees is the class
//! (a Lambda function error's `errorType`) and the message (`errorMessage`), so the project keeps
//! both exactly, and the root cause a framework wrapper (Jackson) hides.

use std::fmt;

/// Fully qualified names of the exception classes TPF's code and its mappers throw.
pub mod class {
    pub const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
    pub const ILLEGAL_STATE: &str = "java.lang.IllegalStateException";
    pub const NULL_POINTER: &str = "java.lang.NullPointerException";
    pub const ARITHMETIC: &str = "java.lang.ArithmeticException";
    /// `jakarta.ws.rs.NotFoundException`: an unknown execution.
    pub const NOT_FOUND: &str = "jakarta.ws.rs.NotFoundException";
    /// A record constructor threw while Jackson bound it.
    pub const VALUE_INSTANTIATION: &str =
        "com.fasterxml.jackson.databind.exc.ValueInstantiationException";
    /// A value Jackson cannot convert (an enum name it does not know, text that is no number).
    pub const INVALID_FORMAT: &str = "com.fasterxml.jackson.databind.exc.InvalidFormatException";
    /// A JSON token of the wrong kind (an object where text is expected).
    pub const MISMATCHED_INPUT: &str =
        "com.fasterxml.jackson.databind.exc.MismatchedInputException";
    /// A key the strict mapper does not know.
    pub const UNRECOGNIZED_PROPERTY: &str =
        "com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException";
    /// A number outside the Java type's range.
    pub const INPUT_COERCION: &str = "com.fasterxml.jackson.core.exc.InputCoercionException";
    /// Text that is not JSON.
    pub const JSON_PARSE: &str = "com.fasterxml.jackson.core.JsonParseException";
}

/// One Java exception: its class, its message, and the exception it wraps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaError {
    /// The fully qualified class name (a [`class`] constant): a Lambda function error's
    /// `errorType`.
    pub class: &'static str,
    /// The exception's message: a Lambda function error's `errorMessage`.
    pub message: String,
    /// The exception this one wraps.
    pub cause: Option<Box<JavaError>>,
}

impl JavaError {
    pub fn new(class: &'static str, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            cause: None,
        }
    }

    pub fn illegal_argument(message: impl Into<String>) -> Self {
        Self::new(class::ILLEGAL_ARGUMENT, message)
    }

    pub fn illegal_state(message: impl Into<String>) -> Self {
        Self::new(class::ILLEGAL_STATE, message)
    }

    /// `Objects.requireNonNull(value, name)`: the message is the bare name.
    pub fn null_pointer(name: impl Into<String>) -> Self {
        Self::new(class::NULL_POINTER, name)
    }

    /// `this`, wrapping `cause`.
    pub fn caused_by(mut self, cause: JavaError) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }

    /// The class without its package (`IllegalArgumentException`).
    pub fn simple_class(&self) -> &'static str {
        self.class.rsplit('.').next().unwrap_or(self.class)
    }

    /// The innermost exception (Jackson's wrapper unwrapped), or this one.
    pub fn root_cause(&self) -> &JavaError {
        let mut at = self;
        while let Some(cause) = &at.cause {
            at = cause;
        }
        at
    }
}

impl fmt::Display for JavaError {
    /// `SimpleClass: message`, as Java's `Throwable.toString()` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.simple_class(), self.message)
    }
}

impl std::error::Error for JavaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_java_and_finds_the_root() {
        let inner = JavaError::illegal_argument("generation must be positive");
        let outer = JavaError::new(class::VALUE_INSTANTIATION, "problem").caused_by(inner.clone());
        assert_eq!(
            inner.to_string(),
            "IllegalArgumentException: generation must be positive"
        );
        assert_eq!(outer.root_cause(), &inner);
        assert_eq!(outer.simple_class(), "ValueInstantiationException");
        assert!(std::error::Error::source(&outer).is_some());
    }
}
