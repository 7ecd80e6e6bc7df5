//! One stream record: the decision's inputs read (the record, its token row), the decision
//! taken by `tpf_sfn_wakeup::bridge::decide`, and its actions carried out with Step Functions.

use std::collections::HashMap;
use tpf_wire::records::attr as tpf_attr;

use aws_sdk_dynamodb::types::AttributeValue as DdbValue;
use tpf_sfn_wakeup::bridge::{
    decide, BridgeAction, BridgeEvent, RecordImage, TokenRow, WakeEngine,
};
use tpf_wire::wakeup::{self, attr};

use super::images::{is_checkpoint, record_image, token_row, Image};
use super::{failed, Change, DurableFunctions, Machines, PassReport, RecordHandler, Source};
use crate::aws::errors;
use crate::aws::tables::TableNames;
use crate::error::Error;

impl RecordHandler {
    pub fn new(config: &aws_config::SdkConfig, tables: TableNames, machines: Machines) -> Self {
        Self::with_clients(
            aws_sdk_dynamodb::Client::new(config),
            aws_sdk_sfn::Client::new(config),
            tables,
            machines,
        )
        .with_durable(
            aws_sdk_lambda::Client::new(config),
            DurableFunctions::default(),
        )
    }

    /// Drivers of the releases in `durable` are Lambda durable functions, started and woken
    /// through `lambda`; parked durable drivers of any release are woken through it too.
    pub fn with_durable(
        mut self,
        lambda: aws_sdk_lambda::Client,
        durable: DurableFunctions,
    ) -> Self {
        self.lambda = lambda;
        self.durable = durable;
        self
    }

    /// With clients of the caller's (tests hand in ones with interceptors or mocks).
    pub fn with_clients(
        ddb: aws_sdk_dynamodb::Client,
        sfn: aws_sdk_sfn::Client,
        tables: TableNames,
        machines: Machines,
    ) -> Self {
        // No durable releases until `with_durable`; the placeholder client is never called
        // then, since only a durable token row or release routes to it.
        let lambda = aws_sdk_lambda::Client::from_conf(
            aws_sdk_lambda::Config::builder()
                .behavior_version(aws_sdk_lambda::config::BehaviorVersion::latest())
                .build(),
        );
        Self {
            ddb,
            sfn,
            tables,
            machines,
            lambda,
            durable: DurableFunctions::default(),
        }
    }

    /// Which stream a stream ARN (`arn:...:table/<name>/stream/<label>`) belongs to, by table
    /// name; `None` for a table this bridge does not read.
    pub fn source_of(&self, stream_arn: &str) -> Option<Source> {
        let table = stream_arn.split("/stream/").next()?.rsplit('/').next()?;
        if table == self.tables.wakeup {
            Some(Source::Wakeups)
        } else if table == self.tables.execution {
            Some(Source::Executions)
        } else {
            None
        }
    }

    /// Handles one stream record; true when it was one of the bridge's own checkpoint writes.
    pub async fn handle(
        &self,
        source: Source,
        change: Change<'_>,
        report: &mut PassReport,
    ) -> Result<bool, Error> {
        if change.remove {
            return Ok(false);
        }
        let Some(new) = change.new else {
            return Ok(false);
        };
        let old = change.old;
        let (event, token): (BridgeEvent, Option<TokenRow>) = match source {
            Source::Executions => {
                let Some(new) = record_image(new) else {
                    return Ok(false);
                };
                let old = old.and_then(record_image);
                let token = self.token(&new.tenant_id, &new.execution_id).await?;
                (BridgeEvent::RecordChanged { old, new }, token)
            }
            Source::Wakeups => {
                if is_checkpoint(new) {
                    return Ok(true);
                }
                let Some(token) = token_row(new) else {
                    return Ok(false);
                };
                // Only a new token is a registration; other rewrites of the row are not.
                if old
                    .and_then(token_row)
                    .is_some_and(|o| o.task_token == token.task_token)
                {
                    return Ok(false);
                }
                let record = self.record(&token.tenant_id, &token.execution_id).await?;
                (BridgeEvent::TokenRegistered { token, record }, None)
            }
        };
        // The engine a wake goes to is the parked driver's: its token row's ARN says which.
        let parked_arn = match (&event, &token) {
            (BridgeEvent::TokenRegistered { token, .. }, _) => token.execution_arn.clone(),
            (_, Some(t)) => t.execution_arn.clone(),
            _ => String::new(),
        };
        for action in decide(&event, token.as_ref()) {
            self.execute(&action, WakeEngine::of(&parked_arn), report)
                .await?;
        }
        Ok(false)
    }

    async fn token(&self, tenant_id: &str, execution_id: &str) -> Result<Option<TokenRow>, Error> {
        read_token(
            &self.ddb,
            &self.tables.wakeup,
            super::SCOPE,
            tenant_id,
            execution_id,
        )
        .await
    }

    async fn record(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<RecordImage>, Error> {
        let out = self
            .ddb
            .get_item()
            .table_name(&self.tables.execution)
            .key(tpf_attr::TENANT_ID, DdbValue::S(tenant_id.to_owned()))
            .key(tpf_attr::EXECUTION_ID, DdbValue::S(execution_id.to_owned()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| failed("GetItem", e))?;
        // Same attribute names in both APIs; re-key the DynamoDB value into the streams shape.
        Ok(out.item().and_then(|item| {
            let image: Image = item
                .iter()
                .filter_map(|(k, v)| {
                    let value = match v {
                        DdbValue::S(s) => {
                            aws_sdk_dynamodbstreams::types::AttributeValue::S(s.clone())
                        }
                        DdbValue::N(n) => {
                            aws_sdk_dynamodbstreams::types::AttributeValue::N(n.clone())
                        }
                        _ => return None,
                    };
                    Some((k.clone(), value))
                })
                .collect();
            record_image(&image)
        }))
    }

    async fn execute(
        &self,
        action: &BridgeAction,
        engine: WakeEngine,
        report: &mut PassReport,
    ) -> Result<(), Error> {
        match action {
            BridgeAction::StartDriver {
                tenant_id,
                execution_id,
                pipeline_id,
                release_version,
                lineage,
            } if self
                .durable
                .function(pipeline_id, release_version)
                .is_some() =>
            {
                let function = self
                    .durable
                    .function(pipeline_id, release_version)
                    .unwrap_or_default();
                let input = BridgeAction::driver_input(tenant_id, execution_id, lineage);
                self.start_durable(function, lineage, &input, report)
                    .await?;
            }
            BridgeAction::Wake { task_token, output } if engine == WakeEngine::Durable => {
                self.wake_durable(task_token, output, report).await?;
            }
            BridgeAction::StartDriver {
                tenant_id,
                execution_id,
                pipeline_id,
                release_version,
                lineage,
            } => {
                let input = BridgeAction::driver_input(tenant_id, execution_id, lineage);
                let result = self
                    .sfn
                    .start_execution()
                    .state_machine_arn(self.machines.driver_arn(pipeline_id, release_version))
                    .name(lineage)
                    .input(input.to_string())
                    .send()
                    .await;
                match result {
                    Ok(_) => report.started += 1,
                    Err(e)
                        if e.as_service_error()
                            .is_some_and(|se| se.is_execution_already_exists()) =>
                    {
                        report.already_done += 1
                    }
                    Err(e)
                        if e.as_service_error().is_some_and(|se| {
                            se.is_state_machine_does_not_exist()
                                || se.is_state_machine_deleting()
                                || se.is_invalid_arn()
                                || se.is_invalid_name()
                                || se.is_invalid_execution_input()
                        }) =>
                    {
                        report.refused.push(format!(
                            "{tenant_id}/{execution_id} ({pipeline_id} {release_version}): {}",
                            aws_sdk_sfn::error::DisplayErrorContext(&e)
                        ))
                    }
                    Err(e) => return Err(failed("StartExecution", e)),
                }
            }
            BridgeAction::Wake { task_token, output } => {
                let result = self
                    .sfn
                    .send_task_success()
                    .task_token(task_token)
                    .output(output.to_string())
                    .send()
                    .await;
                match result {
                    Ok(_) => report.woken += 1,
                    Err(e)
                        if e.as_service_error().is_some_and(|se| {
                            se.is_invalid_token()
                                || se.is_task_timed_out()
                                || se.is_task_does_not_exist()
                        }) =>
                    {
                        report.already_done += 1
                    }
                    Err(e) => return Err(failed("SendTaskSuccess", e)),
                }
            }
        }
        Ok(())
    }
}

/// One row of the wakeup table (`sk` = [`wakeup::DRIVER_ROW`], [`wakeup::WAKEUP_ROW`]), read
/// consistently: the bridge and the sweeper decide on what was last written. `scope` is the
/// calling command's error scope.
pub(crate) async fn read_row(
    ddb: &aws_sdk_dynamodb::Client,
    table: &str,
    scope: &str,
    tenant_id: &str,
    execution_id: &str,
    sk: &str,
) -> Result<Option<HashMap<String, DdbValue>>, Error> {
    let out = ddb
        .get_item()
        .table_name(table)
        .key(wakeup::PK, DdbValue::S(wakeup::pk(tenant_id, execution_id)))
        .key(wakeup::SK, DdbValue::S(sk.to_owned()))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| errors::from_sdk(scope, "GetItem", e, |_| None))?;
    Ok(out.item)
}

/// A string attribute of a row.
pub(crate) fn row_text(item: Option<&HashMap<String, DdbValue>>, name: &str) -> Option<String> {
    match item?.get(name) {
        Some(DdbValue::S(s)) => Some(s.clone()),
        _ => None,
    }
}

/// The parked driver's token row, if one is registered.
pub(crate) async fn read_token(
    ddb: &aws_sdk_dynamodb::Client,
    table: &str,
    scope: &str,
    tenant_id: &str,
    execution_id: &str,
) -> Result<Option<TokenRow>, Error> {
    let item = read_row(
        ddb,
        table,
        scope,
        tenant_id,
        execution_id,
        wakeup::WAKEUP_ROW,
    )
    .await?;
    let text = |name| row_text(item.as_ref(), name);
    Ok(match (text(attr::TASK_TOKEN), text(tpf_attr::UNIT_ID)) {
        (Some(task_token), Some(unit_id)) => Some(TokenRow {
            tenant_id: tenant_id.to_owned(),
            execution_id: execution_id.to_owned(),
            task_token,
            unit_id,
            execution_arn: text(attr::EXECUTION_ARN).unwrap_or_default(),
        }),
        _ => None,
    })
}
