//! The Lambda functions' `bootstrap`: one binary, seven handlers (the function's `Handler`
//! setting, or `TPF_SFN_HANDLER`, picks `bridge`, `relay`, `durable-driver`,
//! `durable-sweeper`, or the gateway host's `gateway-wakeup`, `gateway-reconciler` and
//! `gateway-starter`), on Lambda's runtime API through `lambda_runtime` (the durable driver
//! through the durable execution SDK's wrapper of it).

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use serde_json::Value;
use tpf_sfn_lambda::config::{Env, Handler};
use tpf_sfn_lambda::durable::Driver;
use tpf_sfn_lambda::sweeper::{output, sweep_key, Sweeper};
use tpf_sfn_wakepath::bridge::RecordHandler;
use tpf_sfn_wakepath::gateway::reconciler::Reconciler;
use tpf_sfn_wakepath::relay::gateway::{GatewayRelay, LambdaGateway};
use tpf_sfn_wakepath::relay::{MessageHandler, TaskRelay};

type Error = lambda_runtime::Error;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let env = Env(|name: &str| std::env::var(name).ok());
    let handler = env.handler()?;
    // The function's role, region and endpoint come from Lambda's environment.
    let config = aws_config::load_from_env().await;
    match handler {
        Handler::Bridge => {
            let (tables, machines) = env.bridge()?;
            let records = RecordHandler::new(&config, tables, machines).with_durable(
                aws_sdk_lambda::Client::new(&config),
                env.durable_functions()?,
            );
            let records = &records;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| async move {
                let batch = tpf_sfn_lambda::bridge::handle(records, &event.payload).await?;
                let r = &batch.report;
                eprintln!(
                    "bridge: {} records, {} drivers started, {} woken, {} already done, {} refused{}",
                    r.records,
                    r.started,
                    r.woken,
                    r.already_done,
                    r.refused.len(),
                    batch
                        .failure
                        .as_deref()
                        .map(|f| format!("; stopped at a failed record, retried: {f}"))
                        .unwrap_or_default()
                );
                for refused in &r.refused {
                    eprintln!("bridge: driver start refused for {refused}");
                }
                Ok::<_, Error>(batch.response)
            }))
            .await
        }
        Handler::DurableDriver => {
            let driver = std::sync::Arc::new(Driver::new(&env, &config)?);
            aws_durable_execution_sdk::run(move |input: Value, ctx| {
                tpf_sfn_lambda::durable::handle(driver.clone(), input, ctx)
            })
            .await
        }
        Handler::DurableSweeper => {
            let sweeper = Sweeper::new(&env, &config)?;
            let sweeper = &sweeper;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
                let key = sweep_key(&event.payload, &event.context.request_id);
                let report = sweeper
                    .run(&key)
                    .await
                    .map_err(|e| e.report().to_string())?;
                Ok::<_, Error>(output(&report))
            }))
            .await
        }
        Handler::GatewayWakeup => {
            let (host, starter) = tpf_sfn_lambda::gateway::pieces(&env.gateway_host()?, &config)
                .map_err(|e| e.report().to_string())?;
            let wakeup = tpf_sfn_lambda::gateway::wakeup(host, starter);
            let wakeup = &wakeup;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| async move {
                let b = tpf_sfn_lambda::gateway::wakeup_batch(wakeup, &event.payload).await;
                eprintln!(
                    "gateway-wakeup: {} acknowledged, {} bound, {} delivered, {} replaced, {} retried",
                    b.acknowledged,
                    b.bound,
                    b.delivered,
                    b.replaced,
                    b.retried.len()
                );
                for r in &b.retried {
                    eprintln!("gateway-wakeup: retried {r}");
                }
                Ok::<_, Error>(b.response)
            }))
            .await
        }
        Handler::GatewayReconciler => {
            let (host, starter) = tpf_sfn_lambda::gateway::pieces(&env.gateway_host()?, &config)
                .map_err(|e| e.report().to_string())?;
            let reconciler = Reconciler { host, starter };
            let reconciler = &reconciler;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
                let done = tpf_sfn_lambda::gateway::reconcile(reconciler, &event.payload)
                    .await
                    .map_err(|e| e.report().to_string())?;
                eprintln!("gateway-reconciler: {done:?}");
                Ok::<_, Error>(Value::Null)
            }))
            .await
        }
        Handler::GatewayStarter => {
            let starter = tpf_sfn_lambda::gateway::starter(&env.drivers()?, &config);
            let starter = &starter;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
                let started = tpf_sfn_lambda::gateway::start(starter, &event.payload)
                    .await
                    .map_err(|e| e.report().to_string())?;
                Ok::<_, Error>(started)
            }))
            .await
        }
        Handler::Relay => {
            let sfn = aws_sdk_sfn::Client::new(&config);
            match env.gateway_function()? {
                // The gateway binding's queue transport: invoke the gateway function.
                Some(arn) => {
                    let lambda = LambdaGateway::new(aws_sdk_lambda::Client::new(&config), arn);
                    relay(GatewayRelay::new(sfn, lambda)).await
                }
                None => relay(TaskRelay::new(sfn, env.relay(&config)?)).await,
            }
        }
    }
}

/// Runs the relay handler over `handler`'s kind of message.
async fn relay<H: MessageHandler + Sync>(handler: H) -> Result<(), Error> {
    let relay = &handler;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let batch = tpf_sfn_lambda::relay::handle(relay, &event.payload).await;
        let r = &batch.report;
        eprintln!(
            "relay: {} messages, {} succeeded, {} failed, {} already done, {} malformed, {} retried",
            r.received,
            r.succeeded,
            r.failed,
            r.already_done,
            r.malformed.len(),
            r.retained.len()
        );
        for m in r.malformed.iter().chain(&r.retained) {
            eprintln!("relay: {m}");
        }
        for f in &r.failures {
            eprintln!("relay: failed {f}");
        }
        Ok::<_, Error>(batch.response)
    }))
    .await
}
