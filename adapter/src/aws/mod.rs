//! Everything that talks to AWS. Clients come from the standard AWS config chain (environment,
//! profiles, `AWS_ENDPOINT_URL*`), with explicit overrides from the command line.

pub mod client;
pub mod dynamo_item;
pub mod dynamo_store;
pub mod tables;
