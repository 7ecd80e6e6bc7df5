//! A durable release's driver generations: the driver function's durable executions whose
//! names are this TPF execution's, oldest first.

use aws_sdk_lambda::types::Execution;

use super::{fmt_time, Generation, GenerationNames, Query, SCOPE};
use crate::aws::errors::{self, lambda as classify};
use crate::error::Error;

/// The function's ARN when it is deployed, and the generations found.
pub async fn generations(
    lambda: &aws_sdk_lambda::Client,
    names: &GenerationNames,
    q: &Query<'_>,
) -> Result<(Option<String>, Vec<Generation>), Error> {
    let function = &q.target.driver;
    let arn = match lambda.get_function().function_name(function).send().await {
        Ok(out) => out
            .configuration()
            .and_then(|c| c.function_arn())
            .map(str::to_string),
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            None
        }
        Err(e) => return Err(errors::from_sdk(SCOPE, "GetFunction", e, classify::get)),
    };
    if arn.is_none() {
        return Ok((None, Vec::new()));
    }
    // By name, generation 1 up to the first that never ran: the function may have run many
    // other executions.
    let mut found = Vec::new();
    for name in names.gateway_names() {
        let runs = list(lambda, SCOPE, function, Some(&name), &[]).await?;
        if runs.is_empty() {
            break;
        }
        found.extend(runs);
    }
    found.sort_by_key(|x| x.start_timestamp().as_nanos());
    let mut gens = Vec::new();
    for x in found {
        let arn = x.durable_execution_arn().to_string();
        let d = lambda
            .get_durable_execution()
            .durable_execution_arn(&arn)
            .send()
            .await
            .map_err(|e| {
                errors::from_sdk(
                    SCOPE,
                    "GetDurableExecution",
                    e,
                    classify::get_durable_execution,
                )
            })?;
        gens.push(Generation {
            name: x.durable_execution_name().to_string(),
            status: d.status().as_str().to_string(),
            started: fmt_time(d.start_timestamp()),
            stopped: d.end_timestamp().map(fmt_time),
            current_state: None,
            error: d.error().and_then(|e| e.error_type()).map(str::to_string),
            console_url: q.console_region.map(|region| console_url(region, function)),
            arn,
        });
    }
    Ok((arn, gens))
}

/// The function's durable executions, every page; with `name`, only those of that name; with
/// `statuses`, only those in one of them. `scope` names the command in a failure's code.
pub async fn list(
    lambda: &aws_sdk_lambda::Client,
    scope: &'static str,
    function: &str,
    name: Option<&str>,
    statuses: &[aws_sdk_lambda::types::ExecutionStatus],
) -> Result<Vec<Execution>, Error> {
    let mut out = Vec::new();
    let mut pages = lambda
        .list_durable_executions_by_function()
        .function_name(function)
        .set_durable_execution_name(name.map(str::to_string))
        .set_statuses((!statuses.is_empty()).then(|| statuses.to_vec()))
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| {
            errors::from_sdk(
                scope,
                "ListDurableExecutionsByFunction",
                e,
                classify::list_durable_executions,
            )
        })?;
        out.extend(page.durable_executions().iter().cloned());
    }
    Ok(out)
}

/// The driver function's page in the Lambda console, where its durable executions are listed.
pub fn console_url(region: &str, function: &str) -> String {
    format!(
        "https://{region}.console.aws.amazon.com/lambda/home?region={region}#/functions/{function}"
    )
}
