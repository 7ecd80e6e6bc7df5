//! What `dev` prints once the loop runs: what runs where, and commands to try.

use serde_json::json;

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
    let shown_token = if origin == "generated" { token } else { "" };
    match args.format {
        Format::Json => println!(
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
                "token": {"from": origin, "value": if shown_token.is_empty() { None } else { Some(shown_token) }},
                "out": args.out.display().to_string(),
            })
        ),
        Format::Text => {
            println!(
                "tpf-sfn dev: {} release {} on {endpoint}",
                p.identity.pipeline_id, p.identity.release_version
            );
            let created = p.tables.iter().filter(|(_, c)| *c).count();
            println!(
                "  tables   {} ({created} created, {} existed)",
                p.tables
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                p.tables.len() - created
            );
            println!("  queue    {}  (the driver's action calls)", p.queue_url);
            for (role, arn, word) in &p.machines {
                println!("  {role:<8} {arn}  ({word})");
            }
            println!("  compiled {}", args.out.display());
            println!(
                "  host     {host}  Action API v1 + control plane, DynamoDB store, tenant `{}` active",
                args.tenant
            );
            println!(
                "  bridge   streams of {} and {} -> starts and wakes drivers",
                names.execution, names.wakeup
            );
            println!(
                "  relay    {} -> {host} -> SendTaskSuccess/Failure",
                p.queue_url
            );
            if shown_token.is_empty() {
                println!("  token    from {origin}");
            } else {
                println!("  token    {shown_token}  (generated; pass --token or TPF_SFN_TOKEN to choose one)");
            }
            println!("  schedule none: the sweeper is deployed but not scheduled here; start it by hand to sweep");
            println!("try:");
            println!(
                "  curl -s -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' \\\n    -d '{{\"pipelineId\":\"{}\",\"inputShape\":\"UNI\",\"inputPayload\":{{\"orderId\":\"o-1\"}},\"idempotencyKey\":\"o-1\",\"outputStreaming\":false}}' \\\n    {host}/tpf/control-plane/tenants/{}/executions",
                if shown_token.is_empty() { "$TPF_SFN_TOKEN" } else { shown_token },
                p.identity.pipeline_id,
                args.tenant
            );
            let table = crate::cmd::tables::flags(&args.tables);
            println!(
                "  tpf-sfn status --out {} --tenant {} --execution <executionId>{table}{}",
                args.out.display(),
                args.tenant,
                args.connection
                    .endpoint_url
                    .as_deref()
                    .map(|u| format!(" --endpoint-url {u}"))
                    .unwrap_or_default()
                    + &args
                        .connection
                        .region
                        .as_deref()
                        .map(|r| format!(" --region {r}"))
                        .unwrap_or_default()
            );
            println!("Ctrl-C stops host, bridge and relay.");
        }
    }
}
