//! How a failed AWS call becomes the adapter's [`Error`]: a code per command scope and kind,
//! classified from the SDK's typed errors, with a hint and the service's own words as the cause.
//!
//! Classification reads the modeled error variants (`is_invalid_definition()`, ...) first. Only
//! errors the service does not model for an operation (throttling, access denied) fall back to
//! the error code the SDK exposes through `ProvideErrorMetadata`. Error messages are shown to the
//! user but never parsed.

use std::fmt;

use aws_sdk_sfn::error::{ProvideErrorMetadata, SdkError};

use crate::error::Error;

/// What went wrong, in terms of what the user can do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    AccessDenied,
    Throttled,
    InvalidDefinition,
    InvalidLogging,
    InvalidTracing,
    InvalidArn,
    /// Another writer created or changed the resource between our read and our write.
    Conflict,
    NotFound,
    Deleting,
    LimitExceeded,
    Validation,
    /// The endpoint could not be reached or did not answer in time.
    Unreachable,
    /// Credentials or region could not be resolved, or the request could not be built.
    Configuration,
    Other,
}

impl Kind {
    /// Every kind, in the order `docs/codes.md` lists them.
    pub const ALL: &'static [Kind] = &[
        Kind::AccessDenied,
        Kind::Throttled,
        Kind::InvalidDefinition,
        Kind::InvalidLogging,
        Kind::InvalidTracing,
        Kind::InvalidArn,
        Kind::Conflict,
        Kind::NotFound,
        Kind::Deleting,
        Kind::LimitExceeded,
        Kind::Validation,
        Kind::Unreachable,
        Kind::Configuration,
        Kind::Other,
    ];

    pub fn code_suffix(self) -> &'static str {
        match self {
            Kind::AccessDenied => "ACCESS_DENIED",
            Kind::Throttled => "THROTTLED",
            Kind::InvalidDefinition => "INVALID_DEFINITION",
            Kind::InvalidLogging => "INVALID_LOGGING",
            Kind::InvalidTracing => "INVALID_TRACING",
            Kind::InvalidArn => "INVALID_ARN",
            Kind::Conflict => "CONFLICT",
            Kind::NotFound => "NOT_FOUND",
            Kind::Deleting => "MACHINE_DELETING",
            Kind::LimitExceeded => "LIMIT_EXCEEDED",
            Kind::Validation => "VALIDATION",
            Kind::Unreachable => "UNREACHABLE",
            Kind::Configuration => "CONFIGURATION",
            Kind::Other => "AWS_ERROR",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            Kind::AccessDenied => "the caller's IAM identity lacks this permission: grant it (states:* on the release's machines, dynamodb:GetItem on TPF's tables) or use another --profile",
            Kind::Throttled => "AWS throttled the request even after the SDK's retries: wait and re-run; the command is idempotent",
            Kind::InvalidDefinition => "the definition was rejected by Step Functions: run `tpf-sfn validate` on it and recompile with the current tpf-sfn",
            Kind::InvalidLogging => "check [logging] log-group-arn (must end in `:*`) and that the role may deliver logs to CloudWatch Logs",
            Kind::InvalidTracing => "check [tracing] in the driver configuration",
            Kind::InvalidArn => "check --role-arn and the ARNs in the driver configuration",
            Kind::Conflict => "another deploy changed this machine at the same time: re-run; the command is idempotent",
            Kind::NotFound => "the resource does not exist (yet): deploy the release first, or check --region and --endpoint-url",
            Kind::Deleting => "the machine is being deleted: wait until the deletion finishes, then deploy again",
            Kind::LimitExceeded => "an account quota is exhausted: prune old releases (`tpf-sfn prune`) or raise the quota",
            Kind::Validation => "the request was rejected as invalid: check names, tags and --role-arn",
            Kind::Unreachable => "the endpoint could not be reached: check --endpoint-url, --region and the network",
            Kind::Configuration => "set a region (--region or AWS_REGION) and credentials (AWS_PROFILE, --profile or environment)",
            Kind::Other => "see the AWS error above",
        }
    }
}

/// The service's own words for a failed call: its error code and message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ServiceError {
    pub code: String,
    pub message: String,
}

/// `SCOPE_KIND`: `DEPLOY`, `STATUS`, `RELEASES`, … say which command's codes an error belongs to.
pub fn code(scope: &str, kind: Kind) -> String {
    format!("{scope}_{}", kind.code_suffix())
}

/// A failed AWS call that is not an SDK error (a missing field, an impossible answer).
pub fn failed(scope: &str, operation: &str, kind: Kind, detail: impl fmt::Display) -> Error {
    Error::new(code(scope, kind), format!("{operation} failed: {detail}")).with_hint(kind.hint())
}

/// Classifies an SDK error. `typed` maps the operation's modeled variants; everything else
/// falls back to the transport outcome and, last, to the error code. The cause is the service's
/// code and message when it answered, otherwise the SDK's error itself.
pub fn from_sdk<E, R>(
    scope: &str,
    operation: &str,
    err: SdkError<E, R>,
    typed: impl FnOnce(&E) -> Option<Kind>,
) -> Error
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: fmt::Debug + Send + Sync + 'static,
{
    let kind = match &err {
        SdkError::ServiceError(service) => {
            let e = service.err();
            typed(e).unwrap_or_else(|| kind_from_code(e.code()))
        }
        SdkError::DispatchFailure(d) if d.is_io() || d.is_timeout() => Kind::Unreachable,
        SdkError::DispatchFailure(_) => Kind::Configuration,
        SdkError::TimeoutError(_) => Kind::Unreachable,
        SdkError::ConstructionFailure(_) => Kind::Configuration,
        _ => Kind::Other,
    };
    let error = Error::new(code(scope, kind), format!("{operation} failed"))
        .with_hint(kind.hint())
        .with_detail(aws_sdk_sfn::error::DisplayErrorContext(&err).to_string());
    match err.as_service_error() {
        // An error built without metadata (a mock, an older endpoint) still displays its
        // variant and message.
        Some(e) => match e.code() {
            Some(code) => error.with_source(ServiceError {
                code: code.to_owned(),
                message: one_line(&e.message().map_or_else(|| e.to_string(), str::to_owned)),
            }),
            None => error.with_source(RootCause(one_line(&e.to_string()))),
        },
        // The SDK's outer layers print as debug structures; the innermost cause says it.
        None => error.with_source(RootCause(one_line(&root_cause(&err)))),
    }
}

/// Longest service message shown without `--verbose`: services echo whole requests (a refused
/// definition comes back in full).
const MAX_MESSAGE: usize = 300;

/// The first line of `text`, at most [`MAX_MESSAGE`] characters.
fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= MAX_MESSAGE {
        return line.to_owned();
    }
    let cut: String = line.chars().take(MAX_MESSAGE).collect();
    format!("{cut}… (--verbose shows all)")
}

/// The innermost cause's own words: SDK errors nest their reason several sources deep.
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// A call that got no answer, said in its innermost cause's words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct RootCause(String);

/// Errors the Step Functions and DynamoDB models do not declare per operation but every AWS
/// service can return. Codes are stable API identifiers, unlike messages.
fn kind_from_code(code: Option<&str>) -> Kind {
    match code {
        Some(
            "ThrottlingException"
            | "Throttling"
            | "TooManyRequestsException"
            | "RequestLimitExceeded"
            | "ProvisionedThroughputExceededException",
        ) => Kind::Throttled,
        Some(
            "AccessDeniedException"
            | "AccessDenied"
            | "UnauthorizedOperation"
            | "UnrecognizedClientException"
            | "InvalidSignatureException"
            | "ExpiredTokenException"
            | "MissingAuthenticationToken",
        ) => Kind::AccessDenied,
        Some("ResourceNotFoundException") => Kind::NotFound,
        Some("ValidationException") => Kind::Validation,
        _ => Kind::Other,
    }
}

/// `classify!(name, ErrorType, { Kind: is_a | is_b; ... })` writes `fn name(&ErrorType) ->
/// Option<Kind>`: the first row whose modeled variant matches wins, in the order written.
macro_rules! classify {
    ($name:ident, $err:ty, { $($kind:ident: $($check:ident)|+;)* }) => {
        pub fn $name(e: &$err) -> Option<Kind> {
            $(
                if $(e.$check())||+ {
                    return Some(Kind::$kind);
                }
            )*
            None
        }
    };
}

/// Typed classifications of the Step Functions operations deploy and status use.
pub mod sfn {
    use aws_sdk_sfn::operation::create_state_machine::CreateStateMachineError as C;
    use aws_sdk_sfn::operation::delete_state_machine::DeleteStateMachineError as Del;
    use aws_sdk_sfn::operation::describe_execution::DescribeExecutionError as DE;
    use aws_sdk_sfn::operation::describe_state_machine::DescribeStateMachineError as D;
    use aws_sdk_sfn::operation::get_execution_history::GetExecutionHistoryError as H;
    use aws_sdk_sfn::operation::list_executions::ListExecutionsError as LE;
    use aws_sdk_sfn::operation::list_tags_for_resource::ListTagsForResourceError as LT;
    use aws_sdk_sfn::operation::tag_resource::TagResourceError as T;
    use aws_sdk_sfn::operation::update_state_machine::UpdateStateMachineError as U;

    use super::Kind;

    classify!(create, C, {
        Conflict: is_state_machine_already_exists | is_conflict_exception;
        InvalidDefinition: is_invalid_definition;
        InvalidLogging: is_invalid_logging_configuration;
        InvalidTracing: is_invalid_tracing_configuration;
        InvalidArn: is_invalid_arn;
        Deleting: is_state_machine_deleting;
        LimitExceeded: is_state_machine_limit_exceeded | is_too_many_tags;
        AccessDenied: is_kms_access_denied_exception;
        Throttled: is_kms_throttling_exception;
        Validation: is_validation_exception | is_invalid_name;
    });

    classify!(update, U, {
        Conflict: is_conflict_exception;
        InvalidDefinition: is_invalid_definition;
        InvalidLogging: is_invalid_logging_configuration;
        InvalidTracing: is_invalid_tracing_configuration;
        InvalidArn: is_invalid_arn;
        Deleting: is_state_machine_deleting;
        NotFound: is_state_machine_does_not_exist;
        LimitExceeded: is_service_quota_exceeded_exception;
        AccessDenied: is_kms_access_denied_exception;
        Throttled: is_kms_throttling_exception;
        Validation: is_validation_exception | is_missing_required_parameter;
    });

    classify!(describe, D, {
        NotFound: is_state_machine_does_not_exist;
        InvalidArn: is_invalid_arn;
        AccessDenied: is_kms_access_denied_exception;
        Throttled: is_kms_throttling_exception;
    });

    classify!(tags, LT, {
        NotFound: is_resource_not_found;
        InvalidArn: is_invalid_arn;
    });

    classify!(tag, T, {
        NotFound: is_resource_not_found;
        InvalidArn: is_invalid_arn;
        LimitExceeded: is_too_many_tags;
    });

    classify!(list_executions, LE, {
        NotFound: is_state_machine_does_not_exist | is_resource_not_found;
        InvalidArn: is_invalid_arn;
        Validation: is_validation_exception | is_invalid_token;
    });

    classify!(describe_execution, DE, {
        NotFound: is_execution_does_not_exist;
        InvalidArn: is_invalid_arn;
        AccessDenied: is_kms_access_denied_exception;
        Throttled: is_kms_throttling_exception;
    });

    classify!(history, H, {
        NotFound: is_execution_does_not_exist;
        InvalidArn: is_invalid_arn;
        AccessDenied: is_kms_access_denied_exception;
        Throttled: is_kms_throttling_exception;
        Validation: is_invalid_token;
    });

    classify!(delete, Del, {
        InvalidArn: is_invalid_arn;
        Validation: is_validation_exception;
    });

    /// Operations without modeled errors beyond the common ones.
    pub fn none<E>(_: &E) -> Option<Kind> {
        None
    }
}

/// Typed classifications of the Lambda operations behind a durable release's deploy.
pub mod lambda {
    use aws_sdk_lambda::operation::create_function::CreateFunctionError as C;
    use aws_sdk_lambda::operation::delete_function::DeleteFunctionError as D;
    use aws_sdk_lambda::operation::get_durable_execution::GetDurableExecutionError as GD;
    use aws_sdk_lambda::operation::get_function::GetFunctionError as G;
    use aws_sdk_lambda::operation::list_durable_executions_by_function::ListDurableExecutionsByFunctionError as LD;
    use aws_sdk_lambda::operation::list_functions::ListFunctionsError as LF;
    use aws_sdk_lambda::operation::list_tags::ListTagsError as LT;
    use aws_sdk_lambda::operation::list_versions_by_function::ListVersionsByFunctionError as LV;
    use aws_sdk_lambda::operation::publish_version::PublishVersionError as P;
    use aws_sdk_lambda::operation::tag_resource::TagResourceError as T;
    use aws_sdk_lambda::operation::update_function_configuration::UpdateFunctionConfigurationError as U;

    use super::Kind;

    classify!(get, G, {
        NotFound: is_resource_not_found_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
    });

    classify!(create, C, {
        Conflict: is_resource_conflict_exception;
        LimitExceeded: is_code_storage_exceeded_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception | is_code_verification_failed_exception | is_invalid_code_signature_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(update, U, {
        Conflict: is_resource_conflict_exception | is_precondition_failed_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(publish, P, {
        Conflict: is_resource_conflict_exception | is_precondition_failed_exception;
        LimitExceeded: is_code_storage_exceeded_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(versions, LV, {
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(tag, T, {
        Conflict: is_resource_conflict_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(get_durable_execution, GD, {
        NotFound: is_resource_not_found_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
    });

    classify!(list_functions, LF, {
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
    });

    classify!(list_tags, LT, {
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(list_durable_executions, LD, {
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });

    classify!(delete, D, {
        Conflict: is_resource_conflict_exception;
        Throttled: is_too_many_requests_exception;
        Validation: is_invalid_parameter_value_exception;
        NotFound: is_resource_not_found_exception;
    });
}
