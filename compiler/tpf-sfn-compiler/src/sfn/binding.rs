//! The error names a driver's action Task sees, per binding: which mean "the call did not get
//! through" (retried), and which carry TPF's refusals (caught, never retried).

use tpf_wire::action::task_error;

use crate::plan::BindingPlan;

/// Error names that mean "the call did not get through"; the only errors Step Functions
/// retries. Everything TPF decided arrives as a 2xx outcome instead.
pub fn transport_errors(binding: &BindingPlan) -> Vec<&'static str> {
    match binding {
        BindingPlan::Http { .. } => vec![
            "States.Http.Socket",
            "States.Timeout",
            "States.Http.StatusCode.429",
            "States.Http.StatusCode.500",
            "States.Http.StatusCode.502",
            "States.Http.StatusCode.503",
            "States.Http.StatusCode.504",
        ],
        // The gateway driver names its own (`crate::sfn::gateway`); these are Action API v1's.
        BindingPlan::Lambda { .. } | BindingPlan::Gateway(_) => vec![
            "Lambda.ServiceException",
            "Lambda.AWSLambdaException",
            "Lambda.SdkClientException",
            "Lambda.TooManyRequestsException",
            task_error::TRANSPORT,
            "States.Timeout",
        ],
        BindingPlan::Queue { .. } => vec![
            "SQS.SdkClientException",
            "SQS.AmazonSQSException",
            task_error::TRANSPORT,
            "States.Timeout",
        ],
    }
}

pub fn identity_mismatch_error(binding: &BindingPlan) -> &'static str {
    match binding {
        // The HTTP Task names a response by its status code.
        BindingPlan::Http { .. } => "States.Http.StatusCode.409",
        _ => task_error::RELEASE_IDENTITY_MISMATCH,
    }
}

pub fn not_found_error(binding: &BindingPlan) -> &'static str {
    match binding {
        BindingPlan::Http { .. } => "States.Http.StatusCode.404",
        _ => task_error::EXECUTION_NOT_FOUND,
    }
}
