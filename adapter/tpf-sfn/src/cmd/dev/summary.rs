//! What `dev` prints once the loop runs: what runs where, and commands to try.

use crate::stdio::{out, outln};
use std::fmt::Write;

use serde_json::json;

use super::durable::{Running, LOGS};
use super::provision::Provisioned;
use crate::aws::tables::TableNames;
use crate::cli::{DevArgs, Format};

pub(super) fn summary(
    args: &DevArgs,
    names: &TableNames,
    p: &Provisioned,
    token: &str,
    origin: &str,
) {
    let endpoint = args
        .connection
        .endpoint_url
        .clone()
        .unwrap_or_else(|| "AWS (default endpoints)".to_owned());
    let host = format!("http://{}", args.listen);
    let key = fresh_key();
    // A token dev made up is printed (it is nowhere else); one the user chose is not.
    let shown_token = if matches!(origin, "generated" | "kept") {
        token
    } else {
        ""
    };
    let (name, input) = gateway_start(args, &p.identity, &key);
    let start = json!({"stateMachineArn": p.driver_arn(), "name": name, "input": input});
    match args.format {
        Format::Json => outln!(
            "{}",
            json!({
                "endpoint": endpoint,
                "pipelineId": p.identity.pipeline_id,
                "releaseVersion": p.identity.release_version,
                "tables": p.tables.iter().map(|(n, c)| json!({"table": n, "created": c})).collect::<Vec<_>>(),
                "queueUrl": p.queue_url,
                "machines": p.machines.iter().map(|(r, a, w)| json!({"role": r, "arn": a, "action": w})).collect::<Vec<_>>(),
                "host": host,
                "tenant": args.tenant,
                "idempotencyKey": key,
                "token": {"from": origin, "value": if shown_token.is_empty() { None } else { Some(shown_token) }},
                "out": args.out.display().to_string(),
                "protocol": "gateway",
                "start": start,
            })
        ),
        Format::Text => out!("{}", text(args, names, p, origin, shown_token, &key)),
    }
}

/// The text summary: what runs where, then the calls to try, in the order one makes them.
fn text(
    args: &DevArgs,
    names: &TableNames,
    p: &Provisioned,
    origin: &str,
    shown_token: &str,
    key: &str,
) -> String {
    let endpoint = args
        .connection
        .endpoint_url
        .clone()
        .unwrap_or_else(|| "AWS (default endpoints)".to_owned());
    let host = format!("http://{}", args.listen);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tpf-sfn dev: {} release {} on {endpoint}",
        p.identity.pipeline_id, p.identity.release_version
    );
    tables_line(&mut out, &p.tables);
    let _ = writeln!(
        out,
        "  queue    {}  (the driver's gateway requests)",
        p.queue_url
    );
    for (role, arn, word) in &p.machines {
        let _ = writeln!(out, "  {role:<8} {arn}  ({word})");
    }
    let _ = writeln!(out, "  compiled {}", args.out.display());
    let _ = writeln!(
        out,
        "  host     {host}  TPF's gateway (POST {}) + control plane, DynamoDB store, tenant `{}` active",
        tpf_wire::gateway::invoke::PATH,
        args.tenant
    );
    let _ = writeln!(
        out,
        "  wake-up  streams of {} and {} -> SendTaskSuccess to the parked driver; reconciler on the driver's ended executions",
        names.await_interaction, names.callback_binding
    );
    let _ = writeln!(
        out,
        "  relay    {} -> {host}{} -> SendTaskSuccess/Failure",
        p.queue_url,
        tpf_wire::gateway::invoke::PATH
    );
    token_line(&mut out, args, origin, shown_token);
    let _ = writeln!(out, "try:");
    let (name, input) = gateway_start(args, &p.identity, key);
    let _ = writeln!(
        out,
        "  # start a driver as TPF's ingress does: StartExecution under TPF's name for the key (AWS CLI)"
    );
    let _ = writeln!(
        out,
        "  {}aws stepfunctions start-execution{} \\\n    --state-machine-arn {} --name {name} \\\n    --input '{input}'",
        credentials(args),
        connection_flags(args),
        p.driver_arn()
    );
    control_plane_lines(&mut out, args, shown_token);
    let _ = writeln!(out, "Ctrl-C stops host, wake-up and relay.");
    out
}

/// The tables, and how many dev created.
fn tables_line(out: &mut String, tables: &[(String, bool)]) {
    let created = tables.iter().filter(|(_, c)| *c).count();
    let _ = writeln!(
        out,
        "  tables   {} ({created} created, {} existed)",
        tables
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        tables.len() - created
    );
}

/// Where the token came from, and the token when dev made it up.
fn token_line(out: &mut String, args: &DevArgs, origin: &str, shown_token: &str) {
    if shown_token.is_empty() {
        let _ = writeln!(out, "  token    from {origin}");
    } else {
        let _ = writeln!(
            out,
            "  token    {shown_token}  ({} for {}; --new-token for another, --token or TPF_SFN_TOKEN to choose one)",
            if origin == "kept" { "kept" } else { "generated" },
            args.out.display()
        );
    }
}

/// The control-plane calls after the start: the pending interaction, its completion, TPF's
/// record.
fn control_plane_lines(out: &mut String, args: &DevArgs, shown_token: &str) {
    let host = format!("http://{}", args.listen);
    let bearer = if shown_token.is_empty() {
        "$TPF_SFN_TOKEN"
    } else {
        shown_token
    };
    let cp = format!("{host}/tpf/control-plane/tenants/{}", args.tenant);
    let _ = writeln!(
        out,
        "  # once the driver parks: the pending interaction, then its completion"
    );
    let _ = writeln!(
        out,
        "  curl -s -H 'Authorization: Bearer {bearer}' {cp}/interactions/pending"
    );
    let _ = writeln!(
 out,
                "  curl -s -H 'Authorization: Bearer {bearer}' -H 'Content-Type: application/json' \\\n    -d '{{\"interactionId\":\"<interactionId>\",\"responsePayload\":{{\"decision\":\"accepted\"}}}}' \\\n    {cp}/interactions/complete"
            );
    let _ = writeln!(
        out,
        "  curl -s -H 'Authorization: Bearer {bearer}' {cp}/executions/<executionId>"
    );
}

/// The durable loop's summary: what runs where, then the start TPF's ingress makes (an `Invoke`
/// of the driver function under TPF's name, through the local Lambda endpoint) and the same
/// control-plane calls as on Step Functions.
pub(super) fn durable_summary(
    args: &DevArgs,
    names: &TableNames,
    r: &Running,
    token: &str,
    origin: &str,
) {
    let p = &r.provisioned;
    let key = fresh_key();
    let shown_token = if matches!(origin, "generated" | "kept") {
        token
    } else {
        ""
    };
    let (name, input) = gateway_start(args, &p.identity, &key);
    // The AWS CLI takes a payload as raw bytes only from a file in both its versions.
    let out_dir = std::path::absolute(&args.out).unwrap_or_else(|_| args.out.clone());
    let payload = out_dir.join("start.json");
    if let Err(e) = std::fs::write(&payload, &input) {
        crate::stdio::errln!(
            "tpf-sfn dev: warning: cannot write the printed start's payload {}: {e}",
            payload.display()
        );
    }
    match args.format {
        Format::Json => outln!(
            "{}",
            json!({
                "backend": "lambda-durable",
                "endpoint": args.connection.endpoint_url,
                "pipelineId": p.identity.pipeline_id,
                "releaseVersion": p.identity.release_version,
                "tables": p.tables.iter().map(|(n, c)| json!({"table": n, "created": c})).collect::<Vec<_>>(),
                "function": p.function,
                "gatewayFunctionArn": p.gateway_arn,
                "lambdaEndpoint": r.lambda_url,
                "emulator": format!("http://{}", r.dex),
                "logs": out_dir.join(LOGS).display().to_string(),
                "host": format!("http://{}", args.listen),
                "tenant": args.tenant,
                "idempotencyKey": key,
                "token": {"from": origin, "value": if shown_token.is_empty() { None } else { Some(shown_token) }},
                "out": args.out.display().to_string(),
                "protocol": "gateway",
                "start": {"functionName": p.function, "durableExecutionName": name, "input": input, "payloadFile": payload.display().to_string()},
            })
        ),
        Format::Text => {
            let mut out = String::new();
            let host = format!("http://{}", args.listen);
            let _ = writeln!(
                out,
                "tpf-sfn dev: {} release {} on Lambda durable functions (AWS's durable execution emulator), TPF's tables on {}",
                p.identity.pipeline_id,
                p.identity.release_version,
                args.connection.endpoint_url.as_deref().unwrap_or_default()
            );
            tables_line(&mut out, &p.tables);
            let _ = writeln!(
                out,
                "  function {}  (the durable driver, run by the emulator at http://{}; logs in {})",
                p.function,
                r.dex,
                out_dir.join(LOGS).display()
            );
            let _ = writeln!(
                out,
                "  lambda   {}  (Lambda's API for the loop; its invokes of TPF's gateway {} go to {host}{})",
                r.lambda_url,
                p.gateway_arn,
                tpf_wire::gateway::invoke::PATH
            );
            let _ = writeln!(out, "  compiled {}", args.out.display());
            let _ = writeln!(
                out,
                "  host     {host}  TPF's gateway + control plane, DynamoDB store, tenant `{}` active",
                args.tenant
            );
            let _ = writeln!(
                out,
                "  wake-up  streams of {} and {} -> SendDurableExecutionCallbackSuccess to the parked driver; reconciler on the function's ended executions",
                names.await_interaction, names.callback_binding
            );
            token_line(&mut out, args, origin, shown_token);
            let _ = writeln!(out, "try:");
            let _ = writeln!(
                out,
                "  # start a driver as TPF's ingress does: Invoke (Event) of the driver function under TPF's name for the key (AWS CLI)"
            );
            let _ = writeln!(
                out,
                "  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true aws lambda invoke --endpoint-url {} --region {} \\\n    --function-name {} --durable-execution-name {name} --invocation-type Event \\\n    --payload fileb://{} /dev/null",
                r.lambda_url,
                r.region,
                p.function,
                payload.display()
            );
            control_plane_lines(&mut out, args, shown_token);
            let _ = writeln!(
                out,
                "Ctrl-C stops the host, the wake-up, the Lambda endpoint, the emulator and the driver function."
            );
            out!("{out}");
        }
    }
}

/// An idempotency key of its own for each start of `dev`: after a restart the printed submit is a
/// new execution with an interaction to complete, not a `duplicate` of the last run's.
fn fresh_key() -> String {
    let mut bytes = [0u8; 4];
    // Without randomness the clock still differs from one start to the next.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes = nanos.to_be_bytes();
    }
    format!("o-{}", hex::encode(bytes))
}

/// Against a local emulator, the credentials it takes (any will do) and no instance metadata,
/// which a fresh shell would otherwise go looking for; against AWS nothing (the caller's own
/// chain applies).
fn credentials(args: &DevArgs) -> &'static str {
    if args.connection.emulator_endpoint().is_some() {
        "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true "
    } else {
        ""
    }
}

/// The endpoint, the region dev used (its flag or its environment) and the profile, as flags.
fn connection_flags(args: &DevArgs) -> String {
    let c = &args.connection;
    let region = c.region.clone().or_else(|| {
        ["AWS_REGION", "AWS_DEFAULT_REGION"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|r| !r.is_empty()))
    });
    let mut line = String::new();
    for (flag, value) in [
        ("--endpoint-url", c.endpoint_url.as_deref()),
        ("--region", region.as_deref()),
        ("--profile", c.profile.as_deref()),
    ] {
        if let Some(v) = value {
            let _ = write!(line, " {flag} {v}");
        }
    }
    line
}

/// Generation 1 of an order under `key`, as TPF's ingress starts it: the driver execution's
/// name (TPF's recipe) and its input (`AwsDurableExecutionInput`).
fn gateway_start(args: &DevArgs, identity: &tpf_wire::Identity, key: &str) -> (String, String) {
    let input = tpf_wire::gateway::start::ExecutionInput::new(
        Some(&args.tenant),
        Some(key),
        tpf_wire::gateway::start::ReleaseIdentity {
            pipeline_id: Some(&identity.pipeline_id),
            contract_version: Some(&identity.contract_version),
            release_version: Some(&identity.release_version),
        },
        Some(r#"{"orderId":"o-1"}"#),
        None,
        1,
    );
    match input {
        Ok(input) => (input.durable_execution_name(), input.to_json()),
        // A blank tenant is refused by TPF's rules; the summary still prints.
        Err(e) => (String::new(), format!("(no input: {})", e.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn after_the_start_come_the_pending_and_complete_calls_with_the_token() {
        let args = dev_args(&["--endpoint-url", "http://127.0.0.1:5599", "--tenant", "t1"]);
        let out = text(
            &args,
            &TableNames::default(),
            &provisioned(),
            "kept",
            "tok123",
            "o-5eed",
        );
        let at = |needle: &str| {
            out.find(needle)
                .unwrap_or_else(|| panic!("{needle} missing from:\n{out}"))
        };
        let start = at("aws stepfunctions start-execution");
        let pending = at("-H 'Authorization: Bearer tok123' http://127.0.0.1:8080/tpf/control-plane/tenants/t1/interactions/pending");
        let complete = at("/tpf/control-plane/tenants/t1/interactions/complete");
        let record =
            at("http://127.0.0.1:8080/tpf/control-plane/tenants/t1/executions/<executionId>");
        assert!(
            start < pending && pending < complete && complete < record,
            "{out}"
        );
        assert!(
            out.contains("\"interactionId\":\"<interactionId>\""),
            "{out}"
        );
        assert!(out.contains("tok123  (kept for tpf-sfn-dev"), "{out}");
    }

    fn provisioned() -> Provisioned {
        Provisioned {
            identity: tpf_wire::Identity {
                pipeline_id: "p".into(),
                contract_version: "c".into(),
                release_version: "r".into(),
            },
            tables: vec![("tpf_execution".into(), true)],
            queue_url: "http://q".into(),
            machines: vec![(
                "driver",
                "arn:aws:states:us-east-1:1:stateMachine:d".into(),
                "created".into(),
            )],
            driver_arn_prefix: "arn:aws:states:us-east-1:1:stateMachine:".into(),
            contract: "c.json".into(),
            release: None,
        }
    }

    /// The summary names the gateway's pieces and starts a driver as TPF's ingress does: the
    /// driver machine, TPF's execution name for the printed key, TPF's input; no Action API v1
    /// piece (bridge, sweeper schedule).
    #[test]
    fn the_gateway_loop_prints_the_ingress_start_under_tpfs_name() {
        let args = dev_args(&[
            "--endpoint-url",
            "http://127.0.0.1:5599",
            "--region",
            "us-east-1",
            "--tenant",
            "t1",
        ]);
        let p = provisioned();
        let out = text(
            &args,
            &TableNames::default(),
            &p,
            "kept",
            "tok123",
            "o-5eed",
        );
        let name = tpf_wire::gateway::names::durable_execution_name(Some("t1"), Some("o-5eed"), 1)
            .unwrap();
        assert!(
            out.contains(&format!(
                "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true aws stepfunctions start-execution --endpoint-url http://127.0.0.1:5599 --region us-east-1 \\\n    --state-machine-arn arn:aws:states:us-east-1:1:stateMachine:d --name {name}"
            )),
            "{out}"
        );
        let (printed, input) = gateway_start(&args, &p.identity, "o-5eed");
        assert_eq!(printed, name);
        let read = tpf_wire::gateway::start::ExecutionInput::read(&input).unwrap();
        assert_eq!((read.tenant_id.as_str(), read.generation), ("t1", 1));
        assert!(out.contains(&format!("--input '{input}'")), "{out}");
        assert!(out.contains("/tpf/gateway/v1/invoke"), "{out}");
        assert!(out.contains("/interactions/complete"), "{out}");
        assert!(
            !out.contains("bridge") && !out.contains("sweeper") && !out.contains("Action API"),
            "{out}"
        );
    }

    fn dev_args(extra: &[&str]) -> DevArgs {
        let args = ["tpf-sfn", "dev"].iter().chain(extra);
        match crate::cli::Cli::parse_from(args).command {
            crate::cli::Command::Dev(a) => a,
            _ => unreachable!("dev parses as dev"),
        }
    }

    #[test]
    fn each_start_submits_with_a_key_of_its_own() {
        let (a, b) = (fresh_key(), fresh_key());
        assert_ne!(a, b);
        assert!(a.starts_with("o-") && a.len() == 10, "{a}");
    }

    #[test]
    fn the_start_line_carries_what_another_shell_needs() {
        let local = dev_args(&[
            "--endpoint-url",
            "http://127.0.0.1:5599",
            "--region",
            "eu-west-1",
        ]);
        assert_eq!(
            credentials(&local),
            "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true "
        );
        assert_eq!(
            connection_flags(&local),
            " --endpoint-url http://127.0.0.1:5599 --region eu-west-1"
        );
        // Against AWS no credentials are printed: the caller's own chain applies.
        let aws = dev_args(&["--region", "eu-west-1", "--profile", "p"]);
        assert_eq!(credentials(&aws), "");
        assert_eq!(connection_flags(&aws), " --region eu-west-1 --profile p");
    }
}
