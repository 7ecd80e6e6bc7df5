//! TPF's DynamoDB table layout (names, keys, GSIs, TTL and stream settings) and
//! `tpf-sfn tables create`'s idempotent creation of it.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, StreamSpecification, StreamViewType,
    TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;
use tpf_wire::wakeup;

use super::errors::{self, Kind};
use crate::error::Error;

/// Table names, defaulting to TPF's (`pipeline.orchestrator.dynamo.*` config keys) plus the
/// adapter-owned wakeup table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableNames {
    /// `execution-table`
    pub execution: String,
    /// `execution-key-table`
    pub execution_key: String,
    /// `await-unit-table`
    pub await_unit: String,
    /// `await-interaction-table`
    pub await_interaction: String,
    /// `await-interaction-key-table`
    pub await_interaction_key: String,
    /// `release-table`
    pub release: String,
    /// The adapter's wakeup table (not TPF's).
    pub wakeup: String,
}

impl Default for TableNames {
    fn default() -> Self {
        Self::with_prefix("")
    }
}

impl TableNames {
    /// TPF's default names, each prefixed (e.g. `stage_` ⇒ `stage_tpf_execution`).
    pub fn with_prefix(prefix: &str) -> Self {
        let name = |base: &str| format!("{prefix}{base}");
        Self {
            execution: name("tpf_execution"),
            execution_key: name("tpf_execution_key"),
            await_unit: name("tpf_await_unit"),
            await_interaction: name("tpf_await_interaction"),
            await_interaction_key: name("tpf_await_interaction_key"),
            release: name("tpf_release_registry"),
            wakeup: name(wakeup::TABLE),
        }
    }

    /// Overrides by TPF config key (`execution-table`, ...; `wakeup-table` for the adapter's).
    /// Returns false for an unknown key.
    pub fn set(&mut self, config_key: &str, table: &str) -> bool {
        let slot = match config_key {
            "execution-table" => &mut self.execution,
            "execution-key-table" => &mut self.execution_key,
            "await-unit-table" => &mut self.await_unit,
            "await-interaction-table" => &mut self.await_interaction,
            "await-interaction-key-table" => &mut self.await_interaction_key,
            "release-table" => &mut self.release,
            "wakeup-table" => &mut self.wakeup,
            _ => return false,
        };
        *slot = table.to_owned();
        true
    }
}

/// GSI names on the interaction table (TPF's LocalStack bootstrap).
pub const GSI_BY_UNIT: &str = "await-interaction-by-unit";
pub const GSI_PENDING_BY_TENANT: &str = "await-interaction-pending-by-tenant";
pub const GSI_PENDING_BY_ASSIGNEE: &str = "await-interaction-pending-by-assignee";
pub const GSI_PENDING_BY_GROUP: &str = "await-interaction-pending-by-group";
pub const GSI_PENDING_BY_STEP: &str = "await-interaction-pending-by-step";
pub const GSI_PENDING_BY_DEADLINE: &str = "await-interaction-pending-by-deadline";

/// One table to create.
#[derive(Debug, Clone)]
pub struct TableSpec {
    pub name: String,
    pub hash: &'static str,
    pub range: Option<&'static str>,
    /// (index name, hash attribute, range attribute); all string keys, ALL-projected.
    pub gsis: Vec<(&'static str, &'static str, &'static str)>,
    pub ttl_attribute: Option<&'static str>,
    /// NEW_AND_OLD_IMAGES stream: the bridge consumes these tables.
    pub stream: bool,
}

/// Every table the store and the bridge use, in creation order.
pub fn specs(names: &TableNames) -> Vec<TableSpec> {
    let spec = |name: &str, hash, range, ttl, stream| TableSpec {
        name: name.to_owned(),
        hash,
        range,
        gsis: Vec::new(),
        ttl_attribute: ttl,
        stream,
    };
    let mut interaction = spec(
        &names.await_interaction,
        "tenant_id",
        Some("interaction_id"),
        Some("ttl_epoch_s"),
        false,
    );
    interaction.gsis = vec![
        (GSI_BY_UNIT, "query_unit_key", "query_unit_sort"),
        (
            GSI_PENDING_BY_TENANT,
            "query_pending_tenant_key",
            "query_pending_deadline_sort",
        ),
        (
            GSI_PENDING_BY_ASSIGNEE,
            "query_pending_assignee_key",
            "query_pending_deadline_sort",
        ),
        (
            GSI_PENDING_BY_GROUP,
            "query_pending_group_key",
            "query_pending_deadline_sort",
        ),
        (
            GSI_PENDING_BY_STEP,
            "query_pending_step_key",
            "query_pending_deadline_sort",
        ),
        (
            GSI_PENDING_BY_DEADLINE,
            "query_deadline_key",
            "query_deadline_sort",
        ),
    ];
    vec![
        spec(
            &names.execution,
            "tenant_id",
            Some("execution_id"),
            Some("ttl_epoch_s"),
            true,
        ),
        spec(
            &names.execution_key,
            "tenant_execution_key",
            None,
            Some("ttl_epoch_s"),
            false,
        ),
        spec(
            &names.await_unit,
            "tenant_id",
            Some("unit_id"),
            Some("ttl_epoch_s"),
            false,
        ),
        interaction,
        spec(
            &names.await_interaction_key,
            "lookup_key",
            None,
            Some("ttl_epoch_s"),
            false,
        ),
        spec(
            &names.release,
            "registry_key",
            Some("registry_sort"),
            None,
            false,
        ),
        spec(
            &names.wakeup,
            wakeup::PK,
            Some(wakeup::SK),
            Some(wakeup::attr::EXPIRES_AT),
            true,
        ),
    ]
}

/// What `create_all` did per table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOutcome {
    pub name: String,
    pub created: bool,
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, Error> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .map_err(unbuildable)
}

fn string_attribute(name: &str) -> Result<AttributeDefinition, Error> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .map_err(unbuildable)
}

/// `TABLES_…`: the codes of table creation.
const SCOPE: &str = "TABLES";

fn unbuildable(e: aws_sdk_dynamodb::error::BuildError) -> Error {
    errors::failed(SCOPE, "building a table request", Kind::Configuration, e)
}

/// Lists every table, through the SDK's paginator.
pub async fn existing_tables(client: &Client) -> Result<Vec<String>, Error> {
    client
        .list_tables()
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| errors::from_sdk(SCOPE, "ListTables", e, |_| None))
}

/// Creates the tables that do not exist yet; existing ones are left alone (not compared).
pub async fn create_all(client: &Client, names: &TableNames) -> Result<Vec<TableOutcome>, Error> {
    let existing = existing_tables(client).await?;
    let mut outcomes = Vec::new();
    for spec in specs(names) {
        if existing.contains(&spec.name) {
            outcomes.push(TableOutcome {
                name: spec.name,
                created: false,
            });
            continue;
        }
        create_table(client, &spec).await?;
        outcomes.push(TableOutcome {
            name: spec.name,
            created: true,
        });
    }
    Ok(outcomes)
}

async fn create_table(client: &Client, spec: &TableSpec) -> Result<(), Error> {
    let mut attributes = vec![spec.hash];
    attributes.extend(spec.range);
    for (_, hash, range) in &spec.gsis {
        attributes.extend([*hash, *range]);
    }
    attributes.sort_unstable();
    attributes.dedup();
    let mut request = client
        .create_table()
        .table_name(&spec.name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key(spec.hash, KeyType::Hash)?);
    if let Some(range) = spec.range {
        request = request.key_schema(key(range, KeyType::Range)?);
    }
    for attribute in attributes {
        request = request.attribute_definitions(string_attribute(attribute)?);
    }
    for (index, hash, range) in &spec.gsis {
        request = request.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(*index)
                .key_schema(key(hash, KeyType::Hash)?)
                .key_schema(key(range, KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .map_err(unbuildable)?,
        );
    }
    if spec.stream {
        request = request.stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()
                .map_err(unbuildable)?,
        );
    }
    request.send().await.map_err(|e| {
        errors::from_sdk(SCOPE, &format!("CreateTable {}", spec.name), e, |e| {
            e.is_resource_in_use_exception().then_some(Kind::Conflict)
        })
    })?;
    if let Some(ttl) = spec.ttl_attribute {
        client
            .update_time_to_live()
            .table_name(&spec.name)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .enabled(true)
                    .attribute_name(ttl)
                    .build()
                    .map_err(unbuildable)?,
            )
            .send()
            .await
            .map_err(|e| {
                errors::from_sdk(SCOPE, &format!("UpdateTimeToLive {}", spec.name), e, |_| {
                    None
                })
            })?;
    }
    Ok(())
}
