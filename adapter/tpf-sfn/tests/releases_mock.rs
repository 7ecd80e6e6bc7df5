//! `releases` and `prune` on Lambda durable functions against mocked Lambda clients
//! (aws-smithy-mocks): which functions are releases, how many executions each has RUNNING,
//! which prune may delete, and the delete itself. No network.

use std::collections::BTreeSet;

use aws_sdk_lambda::config::retry::RetryConfig;
use aws_sdk_lambda::operation::delete_function::DeleteFunctionOutput;
use aws_sdk_lambda::operation::list_durable_executions_by_function::ListDurableExecutionsByFunctionOutput;
use aws_sdk_lambda::operation::list_functions::ListFunctionsOutput;
use aws_sdk_lambda::operation::list_tags::ListTagsOutput;
use aws_sdk_lambda::primitives::DateTime;
use aws_sdk_lambda::types::{Execution, ExecutionStatus, FunctionConfiguration};
use aws_sdk_lambda::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::aws::releases::{delete_durable, list_durable, prune_plan, DURABLE_ROLE};
use tpf_sfn_compiler::lowering::manifest::TAG_PREFIX;

const ACCOUNT: &str = "arn:aws:lambda:us-east-1:123456789012:function:";

fn function(name: &str) -> FunctionConfiguration {
    FunctionConfiguration::builder()
        .function_name(name)
        .function_arn(format!("{ACCOUNT}{name}"))
        .build()
}

/// Three functions: two tpf-sfn durable releases (1.0 with one parked execution, 2.0 idle) and
/// one function of someone else's without tpf-sfn's tags.
fn rules() -> Vec<Rule> {
    let list = mock!(Client::list_functions).then_output(|| {
        ListFunctionsOutput::builder()
            .functions(function("tpf-orders-a1-durable"))
            .functions(function("tpf-orders-b2-durable"))
            .functions(function("unrelated"))
            .build()
    });
    let tags = mock!(Client::list_tags).then_compute_output(|input| {
        let resource = input.resource().unwrap_or_default().to_owned();
        let mut out = ListTagsOutput::builder();
        let release = if resource.ends_with("a1-durable") {
            Some("1.0")
        } else if resource.ends_with("b2-durable") {
            Some("2.0")
        } else {
            None
        };
        if let Some(release) = release {
            out = out
                .tags(format!("{TAG_PREFIX}pipeline-id"), "orders")
                .tags(format!("{TAG_PREFIX}contract-version"), "sha256:c")
                .tags(format!("{TAG_PREFIX}release-version"), release)
                .tags(format!("{TAG_PREFIX}definition-sha256"), "d")
                .tags(format!("{TAG_PREFIX}compiler-version"), "0.1.0");
        } else {
            out = out.tags("team", "elsewhere");
        }
        out.build()
    });
    let running = mock!(Client::list_durable_executions_by_function)
        .match_requests(|r| r.statuses() == [ExecutionStatus::Running])
        .then_compute_output(|input| {
            let mut out = ListDurableExecutionsByFunctionOutput::builder();
            if input.function_name() == Some("tpf-orders-a1-durable") {
                out = out.durable_executions(
                    Execution::builder()
                        .durable_execution_arn(format!(
                            "{ACCOUNT}tpf-orders-a1-durable:1/durable-execution/tpf-x"
                        ))
                        .durable_execution_name("tpf-x")
                        .function_arn(format!("{ACCOUNT}tpf-orders-a1-durable:1"))
                        .status(ExecutionStatus::Running)
                        .start_timestamp(DateTime::from_secs(1_700_000_000))
                        .build()
                        .expect("execution"),
                );
            }
            out.build()
        });
    vec![list, tags, running]
}

fn client(rules: &[&Rule]) -> Client {
    mock_client!(aws_sdk_lambda, RuleMode::MatchAny, rules, |b| b
        .retry_config(RetryConfig::disabled()))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

#[test]
fn durable_releases_are_the_tagged_functions_with_their_running_executions() {
    let rules = rules();
    let lambda = client(&rules.iter().collect::<Vec<_>>());
    let found = block_on(list_durable(&lambda, None)).expect("list");
    let summary: Vec<(&str, &str, &str, usize)> = found
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.identity.release_version.as_str(),
                f.role.as_str(),
                f.running_executions,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("tpf-orders-a1-durable", "1.0", DURABLE_ROLE, 1),
            ("tpf-orders-b2-durable", "2.0", DURABLE_ROLE, 0),
        ]
    );
    let only_b = block_on(list_durable(&lambda, Some("tpf-orders-b"))).expect("list");
    assert_eq!(only_b.len(), 1);
    assert_eq!(only_b[0].name, "tpf-orders-b2-durable");
}

#[test]
fn prune_keeps_a_parked_and_an_active_durable_release_and_deletes_an_idle_one() {
    let rules = rules();
    let lambda = client(&rules.iter().collect::<Vec<_>>());
    let found = block_on(list_durable(&lambda, None)).expect("list");
    // Nothing active: only the parked execution keeps release 1.0.
    let plan = prune_plan(&found, Some(&BTreeSet::new()));
    let deleted: Vec<&str> = plan
        .iter()
        .filter(|d| d.delete)
        .map(|d| d.machine.name.as_str())
        .collect();
    assert_eq!(deleted, ["tpf-orders-b2-durable"]);
    assert!(plan[0].reason.contains("RUNNING"), "{}", plan[0].reason);
    // Release 2.0 active for some tenant: nothing goes.
    let active = BTreeSet::from([("orders".to_owned(), "2.0".to_owned())]);
    let plan = prune_plan(&found, Some(&active));
    assert!(plan.iter().all(|d| !d.delete), "{plan:?}");
}

#[test]
fn a_durable_release_is_deleted_by_function_name_and_a_refusal_is_coded() {
    let ok = mock!(Client::delete_function)
        .match_requests(|r| {
            r.function_name() == Some("tpf-orders-b2-durable") && r.qualifier().is_none()
        })
        .then_output(|| DeleteFunctionOutput::builder().build());
    let lambda = client(&[&ok]);
    block_on(delete_durable(&lambda, "tpf-orders-b2-durable")).expect("delete");
    assert_eq!(ok.num_calls(), 1);

    let refused = mock!(Client::delete_function).then_error(|| {
        aws_sdk_lambda::operation::delete_function::DeleteFunctionError::ResourceConflictException(
            aws_sdk_lambda::types::error::ResourceConflictException::builder()
                .message("in use")
                .build(),
        )
    });
    let lambda = client(&[&refused]);
    let err = block_on(delete_durable(&lambda, "tpf-orders-b2-durable")).expect_err("refused");
    let text = format!("{err}");
    assert!(text.contains("DeleteFunction"), "{text}");
}
