//! The Lambda runtime every function a release or the wake path deploys runs on: one
//! `bootstrap` (the `tpf-sfn-lambda` crate) built for it.

/// Lambda's runtime for the functions' `bootstrap` (glibc 2.34).
pub const LAMBDA_RUNTIME: &str = "provided.al2023";
pub const LAMBDA_ARCHITECTURE: &str = "x86_64";
/// The zip `scripts/lambda-package.sh` writes.
pub const LAMBDA_ZIP: &str = "tpf-sfn-lambda.zip";
