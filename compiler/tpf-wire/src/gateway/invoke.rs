//! How the gateway is invoked where it is not a Lambda function: `tpf-sfn serve`'s route, which
//! answers as Lambda's Invoke does, and what a relay of the queue transport (its message's keys:
//! [`super::key::relay`]) answers a token with when the invoke got no answer
//! (`docs/runtime.md`, "The queue transport").

/// `tpf-sfn serve`'s gateway route: the 15-key request in, the 8-key response out.
pub const PATH: &str = "/tpf/gateway/v1/invoke";

/// Lambda's Invoke response header naming a function error (its value:
/// [`super::response::FUNCTION_ERROR_UNHANDLED`]); the body is then the error document.
pub const FUNCTION_ERROR_HEADER: &str = "X-Amz-Function-Error";

/// The error names Step Functions gives a Lambda Invoke that failed before the function
/// answered; the driver retries them as TPF's step retries any error.
pub mod lambda_error {
    /// The service failed (5xx).
    pub const SERVICE: &str = "Lambda.ServiceException";
    /// The service refused the call (another 4xx).
    pub const AWS_LAMBDA: &str = "Lambda.AWSLambdaException";
    /// The call never got an answer (connection, timeout).
    pub const SDK_CLIENT: &str = "Lambda.SdkClientException";
    /// Throttled (429).
    pub const TOO_MANY_REQUESTS: &str = "Lambda.TooManyRequestsException";
    /// A function error whose document names no type.
    pub const UNKNOWN: &str = "Lambda.Unknown";
}
