//! TPF's DynamoDB table layout (names, keys, GSIs, TTL and stream settings) and
//! `tpf-sfn tables create`'s idempotent creation of it: missing tables are created, existing
//! ones compared with the layout, and with `--fix` completed where that is safe.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, IndexStatus, KeySchemaElement, KeyType,
    PointInTimeRecoverySpecification, PointInTimeRecoveryStatus, Projection, ProjectionType,
    ScalarAttributeType, SseSpecification, SseStatus, SseType, StreamSpecification, StreamViewType,
    TableStatus, TimeToLiveSpecification, TimeToLiveStatus,
};
use aws_sdk_dynamodb::Client;
use tpf_wire::gateway::binding::{self as callback_binding, attr as binding_attr};
use tpf_wire::records::attr;
use tpf_wire::records::table_key;

use super::errors::{self, Kind};
use crate::error::Error;

pub use super::table_names::{is_table_name, TableKey, TableNames};

/// GSI names on the interaction table (TPF's table templates).
pub const GSI_BY_UNIT: &str = "await-interaction-by-unit";
pub const GSI_PENDING_BY_TENANT: &str = "await-interaction-pending-by-tenant";
pub const GSI_PENDING_BY_ASSIGNEE: &str = "await-interaction-pending-by-assignee";
pub const GSI_PENDING_BY_GROUP: &str = "await-interaction-pending-by-group";
pub const GSI_PENDING_BY_STEP: &str = "await-interaction-pending-by-step";
pub const GSI_PENDING_BY_DEADLINE: &str = "await-interaction-pending-by-deadline";
/// Today's TPF: item continuations due for work, and an execution's interactions.
pub const GSI_CONTINUATION_WORK: &str = "await-interaction-continuation-work";
pub const GSI_BY_EXECUTION: &str = "await-interaction-by-execution";

/// A key attribute and its DynamoDB type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAttr {
    pub name: &'static str,
    /// `N` rather than `S`.
    pub numeric: bool,
}

impl KeyAttr {
    const fn s(name: &'static str) -> Self {
        Self {
            name,
            numeric: false,
        }
    }

    const fn n(name: &'static str) -> Self {
        Self {
            name,
            numeric: true,
        }
    }

    fn type_name(self) -> &'static str {
        if self.numeric {
            "N"
        } else {
            "S"
        }
    }
}

/// A global secondary index, ALL-projected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gsi {
    pub name: &'static str,
    pub hash: KeyAttr,
    /// `None`: a hash-only index (the binding table's `provider-execution-index`).
    pub range: Option<KeyAttr>,
}

/// One table to create.
#[derive(Debug, Clone)]
pub struct TableSpec {
    pub name: String,
    pub hash: KeyAttr,
    pub range: Option<KeyAttr>,
    pub gsis: Vec<Gsi>,
    pub ttl_attribute: Option<&'static str>,
    /// NEW_AND_OLD_IMAGES stream: the gateway's wake-up function reads the interaction and
    /// binding tables' streams, as TPF's own AWS host does.
    pub stream: bool,
    /// Who reads the stream, for the hint when it is off.
    pub stream_reader: &'static str,
    /// Point-in-time recovery on (TPF's template turns it on for the binding table, whose
    /// rows are the only record of which driver owns which callback).
    pub point_in_time_recovery: bool,
    /// Server-side encryption under the account's AWS managed KMS key (TPF's template's
    /// `SSESpecification: {SSEEnabled: true}` on the binding table), not DynamoDB's default
    /// AWS owned key.
    pub kms_encryption: bool,
}

/// The interaction table's eight indexes: the six every TPF has, then today's two.
fn interaction_gsis() -> Vec<Gsi> {
    let pending = |name, hash| Gsi {
        name,
        hash: KeyAttr::s(hash),
        range: Some(KeyAttr::s("query_pending_deadline_sort")),
    };
    vec![
        Gsi {
            name: GSI_BY_UNIT,
            hash: KeyAttr::s("query_unit_key"),
            range: Some(KeyAttr::s("query_unit_sort")),
        },
        pending(GSI_PENDING_BY_TENANT, "query_pending_tenant_key"),
        pending(GSI_PENDING_BY_ASSIGNEE, "query_pending_assignee_key"),
        pending(GSI_PENDING_BY_GROUP, "query_pending_group_key"),
        pending(GSI_PENDING_BY_STEP, "query_pending_step_key"),
        Gsi {
            name: GSI_PENDING_BY_DEADLINE,
            hash: KeyAttr::s("query_deadline_key"),
            range: Some(KeyAttr::s("query_deadline_sort")),
        },
        Gsi {
            name: GSI_CONTINUATION_WORK,
            hash: KeyAttr::s(table_key::QUERY_CONTINUATION_KEY),
            range: Some(KeyAttr::n(table_key::QUERY_CONTINUATION_DUE_EPOCH_MS)),
        },
        Gsi {
            name: GSI_BY_EXECUTION,
            hash: KeyAttr::s(table_key::QUERY_EXECUTION_KEY),
            range: Some(KeyAttr::s(table_key::QUERY_EXECUTION_SORT)),
        },
    ]
}

/// Every table today's TPF and its AWS host use, as TPF's template makes them, in creation
/// order.
pub fn specs(names: &TableNames) -> Vec<TableSpec> {
    let spec = |name: &str,
                hash: &'static str,
                range: Option<&'static str>,
                ttl: Option<&'static str>| TableSpec {
        name: name.to_owned(),
        hash: KeyAttr::s(hash),
        range: range.map(KeyAttr::s),
        gsis: Vec::new(),
        ttl_attribute: ttl,
        stream: false,
        stream_reader: "",
        point_in_time_recovery: false,
        kms_encryption: false,
    };
    let ttl = Some(attr::TTL_EPOCH_S);
    let execution = spec(
        &names.execution,
        attr::TENANT_ID,
        Some(attr::EXECUTION_ID),
        ttl,
    );
    let mut interaction = spec(
        &names.await_interaction,
        attr::TENANT_ID,
        Some(attr::INTERACTION_ID),
        ttl,
    );
    interaction.gsis = interaction_gsis();
    interaction.stream = true;
    interaction.stream_reader = "today's TPF reads this table's stream to wake its own drivers";
    let mut admission = spec(
        &names.await_admission,
        table_key::SCOPE_KEY,
        None,
        Some(table_key::ADMISSION_EXPIRES_AT),
    );
    admission.range = Some(KeyAttr::n(table_key::SLOT));
    // TPF's template: keys `pk`, `sk`; the provider-ARN index the reconciler looks a driver's
    // registration up by; the wake-up function reads its stream; rows expire by TTL; PITR.
    let mut binding_table = spec(
        &names.callback_binding,
        binding_attr::PK,
        Some(binding_attr::SK),
        Some(binding_attr::EXPIRES_AT_EPOCH_S),
    );
    binding_table.gsis = vec![Gsi {
        name: callback_binding::PROVIDER_EXECUTION_INDEX,
        hash: KeyAttr::s(binding_attr::PROVIDER_EXECUTION_ARN),
        range: None,
    }];
    binding_table.stream = true;
    binding_table.stream_reader = "the gateway's wake-up function reads this table's stream";
    binding_table.point_in_time_recovery = true;
    binding_table.kms_encryption = true;
    vec![
        execution,
        spec(&names.execution_key, "tenant_execution_key", None, ttl),
        // Immutable parts, never expired by TTL (TPF's templates set none).
        spec(
            &names.execution_payload,
            table_key::PAYLOAD_ID,
            Some(table_key::PAYLOAD_PART),
            None,
        ),
        spec(&names.await_unit, attr::TENANT_ID, Some(attr::UNIT_ID), ttl),
        interaction,
        spec(&names.await_interaction_key, "lookup_key", None, ttl),
        admission,
        spec(
            &names.release,
            attr::REGISTRY_KEY,
            Some(attr::REGISTRY_SORT),
            None,
        ),
        binding_table,
    ]
}

/// What `create_all` did per table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOutcome {
    pub name: String,
    pub created: bool,
    /// For a table that existed: what it lacks that the loop needs, fixed or not.
    pub gaps: Vec<Gap>,
}

impl TableOutcome {
    /// Gaps left after this run (not fixed).
    pub fn open_gaps(&self) -> impl Iterator<Item = &Gap> {
        self.gaps.iter().filter(|g| !g.fixed)
    }
}

/// One thing an existing table lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// What is missing or different, e.g. `stream NEW_AND_OLD_IMAGES is off`.
    pub what: String,
    /// Who needs it and what to do.
    pub hint: String,
    /// `--fix` can add it (an UpdateTable or UpdateTimeToLive that changes nothing else).
    pub fixable: bool,
    /// `--fix` added it in this run.
    pub fixed: bool,
}

impl Gap {
    fn fixable(what: String, hint: &str) -> Self {
        Gap {
            what,
            hint: format!("{hint}; `tpf-sfn tables create --fix` adds it"),
            fixable: true,
            fixed: false,
        }
    }

    fn manual(what: String, hint: impl Into<String>) -> Self {
        Gap {
            what,
            hint: hint.into(),
            fixable: false,
            fixed: false,
        }
    }
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, Error> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .map_err(unbuildable)
}

fn attribute(key: KeyAttr) -> Result<AttributeDefinition, Error> {
    AttributeDefinition::builder()
        .attribute_name(key.name)
        .attribute_type(if key.numeric {
            ScalarAttributeType::N
        } else {
            ScalarAttributeType::S
        })
        .build()
        .map_err(unbuildable)
}

/// `(hash S, range N)`: the keys with their types, as the gaps name them.
fn show_typed(hash: KeyAttr, range: Option<KeyAttr>) -> String {
    match range {
        Some(r) => format!(
            "({} {}, {} {})",
            hash.name,
            hash.type_name(),
            r.name,
            r.type_name()
        ),
        None => format!("({} {})", hash.name, hash.type_name()),
    }
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

/// Creates the tables that do not exist yet and compares the existing ones with what the loop
/// needs (keys, indexes, stream, TTL), changing nothing in them.
pub async fn create_all(client: &Client, names: &TableNames) -> Result<Vec<TableOutcome>, Error> {
    create_all_with(client, names, false).await
}

/// [`create_all`], and with `fix` the gaps that can be added in place are added: a missing
/// stream, TTL or index. Keys never change in place, nor does a stream's view type or a TTL on
/// another attribute (changing either ends what readers rely on); those are reported.
pub async fn create_all_with(
    client: &Client,
    names: &TableNames,
    fix: bool,
) -> Result<Vec<TableOutcome>, Error> {
    let existing = existing_tables(client).await?;
    let mut outcomes = Vec::new();
    for spec in specs(names) {
        if existing.contains(&spec.name) {
            let mut gaps = compare(client, &spec).await?;
            if fix {
                repair(client, &spec, &mut gaps).await?;
            }
            outcomes.push(TableOutcome {
                name: spec.name,
                created: false,
                gaps,
            });
            continue;
        }
        create_table(client, &spec).await?;
        outcomes.push(TableOutcome {
            name: spec.name,
            created: true,
            gaps: Vec::new(),
        });
    }
    Ok(outcomes)
}

fn describe_error<E, R>(
    operation: &str,
    table: &str,
    e: aws_sdk_dynamodb::error::SdkError<E, R>,
) -> Error
where
    E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    errors::from_sdk(SCOPE, &format!("{operation} {table}"), e, |_| None)
}

fn key_names(keys: &[KeySchemaElement]) -> (Option<&str>, Option<&str>) {
    let find = |kind: KeyType| {
        keys.iter()
            .find(|k| *k.key_type() == kind)
            .map(|k| k.attribute_name())
    };
    (find(KeyType::Hash), find(KeyType::Range))
}

fn show_keys(hash: Option<&str>, range: Option<&str>) -> String {
    match (hash, range) {
        (Some(h), Some(r)) => format!("({h}, {r})"),
        (Some(h), None) => format!("({h})"),
        _ => "(none)".to_owned(),
    }
}

/// What an existing table lacks, compared with `spec`.
async fn compare(client: &Client, spec: &TableSpec) -> Result<Vec<Gap>, Error> {
    let described = client
        .describe_table()
        .table_name(&spec.name)
        .send()
        .await
        .map_err(|e| describe_error("DescribeTable", &spec.name, e))?;
    let Some(table) = described.table() else {
        return Ok(vec![Gap::manual(
            "DescribeTable returned no description".to_owned(),
            "re-run; if it persists, check the endpoint",
        )]);
    };
    let mut gaps = Vec::new();

    let have = key_names(table.key_schema());
    if have != (Some(spec.hash.name), spec.range.map(|r| r.name)) {
        gaps.push(Gap::manual(
            format!(
                "keys are {}, TPF's are {}",
                show_keys(have.0, have.1),
                show_typed(spec.hash, spec.range)
            ),
            "keys cannot change in place: name another table with --prefix or --table KEY=NAME, \
             or delete this one and run `tpf-sfn tables create` again",
        ));
    }

    for gsi in &spec.gsis {
        let index = gsi.name;
        let found = table
            .global_secondary_indexes()
            .iter()
            .find(|g| g.index_name() == Some(index));
        match found {
            None => gaps.push(Gap::fixable(
                format!(
                    "index {index} {} is missing",
                    show_typed(gsi.hash, gsi.range)
                ),
                "TPF's stores query it",
            )),
            Some(g)
                if key_names(g.key_schema())
                    != (Some(gsi.hash.name), gsi.range.map(|r| r.name)) =>
            {
                let (h, r) = key_names(g.key_schema());
                gaps.push(Gap::manual(
                    format!(
                        "index {index} has keys {}, TPF's are {}",
                        show_keys(h, r),
                        show_typed(gsi.hash, gsi.range)
                    ),
                    "delete the index (UpdateTable) and run `tpf-sfn tables create --fix`",
                ));
            }
            Some(_) => {}
        }
    }

    if spec.stream {
        let stream = table.stream_specification();
        match stream.filter(|s| s.stream_enabled()) {
            None => gaps.push(Gap::fixable(
                "stream NEW_AND_OLD_IMAGES is off".to_owned(),
                spec.stream_reader,
            )),
            Some(s) if s.stream_view_type() != Some(&StreamViewType::NewAndOldImages) => {
                gaps.push(Gap::manual(
                    format!(
                        "stream is {}, its readers need NEW_AND_OLD_IMAGES",
                        s.stream_view_type()
                            .map_or("of no view type", |v| v.as_str())
                    ),
                    "a stream's view type cannot change: disable the stream (UpdateTable \
                     StreamEnabled=false, which ends it and every reader's position in it), \
                     then run `tpf-sfn tables create --fix`",
                ));
            }
            Some(_) => {}
        }
    }

    if let Some(want) = spec.ttl_attribute {
        let ttl = client
            .describe_time_to_live()
            .table_name(&spec.name)
            .send()
            .await
            .map_err(|e| describe_error("DescribeTimeToLive", &spec.name, e))?;
        let description = ttl.time_to_live_description();
        let on = description
            .and_then(|d| d.time_to_live_status())
            .is_some_and(|s| matches!(s, TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling));
        let attribute = description.and_then(|d| d.attribute_name());
        match (on, attribute) {
            (false, _) => gaps.push(Gap::fixable(
                format!("TTL on {want} is off"),
                "TPF's records expire by it",
            )),
            (true, Some(a)) if a != want => gaps.push(Gap::manual(
                format!("TTL is on {a}, TPF's records expire by {want}"),
                "disable TTL (UpdateTimeToLive; AWS allows one change an hour), then run \
                 `tpf-sfn tables create --fix`",
            )),
            _ => {}
        }
    }

    if spec.point_in_time_recovery {
        let backups = client
            .describe_continuous_backups()
            .table_name(&spec.name)
            .send()
            .await
            .map_err(|e| describe_error("DescribeContinuousBackups", &spec.name, e))?;
        let on = backups
            .continuous_backups_description()
            .and_then(|d| d.point_in_time_recovery_description())
            .and_then(|p| p.point_in_time_recovery_status())
            == Some(&PointInTimeRecoveryStatus::Enabled);
        if !on {
            gaps.push(Gap::fixable(
                "point-in-time recovery is off".to_owned(),
                "TPF keeps its callback bindings recoverable",
            ));
        }
    }

    if spec.kms_encryption {
        let on = table.sse_description().is_some_and(|d| {
            matches!(d.status(), Some(SseStatus::Enabled | SseStatus::Enabling))
                && d.sse_type() == Some(&SseType::Kms)
        });
        if !on {
            // Only reported: the switch to a KMS key is one UpdateTable, but --fix changes
            // nothing it cannot check, and emulators do not change a table's encryption.
            gaps.push(Gap::manual(
                "server-side encryption with a KMS key is off".to_owned(),
                format!(
                    "TPF's template encrypts the binding table with the AWS managed KMS key: \
                     aws dynamodb update-table --table-name {} --sse-specification \
                     Enabled=true,SSEType=KMS",
                    spec.name
                ),
            ));
        }
    }
    Ok(gaps)
}

/// Adds what can be added in place. An index is built one at a time and must be ACTIVE before
/// the next; one still building leaves the rest for the next run.
async fn repair(client: &Client, spec: &TableSpec, gaps: &mut [Gap]) -> Result<(), Error> {
    for gap in gaps.iter_mut().filter(|g| g.fixable) {
        if gap.what.starts_with("stream ") {
            client
                .update_table()
                .table_name(&spec.name)
                .stream_specification(
                    StreamSpecification::builder()
                        .stream_enabled(true)
                        .stream_view_type(StreamViewType::NewAndOldImages)
                        .build()
                        .map_err(unbuildable)?,
                )
                .send()
                .await
                .map_err(|e| describe_error("UpdateTable", &spec.name, e))?;
            gap.fixed = true;
        } else if gap.what.starts_with("point-in-time recovery ") {
            enable_pitr(client, &spec.name).await?;
            gap.fixed = true;
        } else if gap.what.starts_with("TTL ") {
            let Some(ttl) = spec.ttl_attribute else {
                continue;
            };
            enable_ttl(client, &spec.name, ttl).await?;
            gap.fixed = true;
        }
    }
    for gap in gaps.iter_mut().filter(|g| g.fixable && !g.fixed) {
        let Some(gsi) = spec
            .gsis
            .iter()
            .find(|g| gap.what.starts_with(&format!("index {} ", g.name)))
        else {
            continue;
        };
        if !table_active(client, &spec.name).await? {
            gap.hint = format!(
                "{}; the table is still building an index: run `tpf-sfn tables create --fix` again once it is ACTIVE",
                gap.hint
            );
            continue;
        }
        let mut update = client.update_table().table_name(&spec.name);
        for a in gsi_attributes(gsi) {
            update = update.attribute_definitions(attribute(a)?);
        }
        update
            .global_secondary_index_updates(
                GlobalSecondaryIndexUpdate::builder()
                    .create(
                        CreateGlobalSecondaryIndexAction::builder()
                            .index_name(gsi.name)
                            .set_key_schema(Some(gsi_keys(gsi)?))
                            .projection(all_projection())
                            .build()
                            .map_err(unbuildable)?,
                    )
                    .build(),
            )
            .send()
            .await
            .map_err(|e| describe_error("UpdateTable", &spec.name, e))?;
        gap.fixed = true;
    }
    Ok(())
}

/// True when the table and every index on it are ACTIVE (no index is being built).
async fn table_active(client: &Client, table: &str) -> Result<bool, Error> {
    let described = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .map_err(|e| describe_error("DescribeTable", table, e))?;
    Ok(described.table().is_some_and(|t| {
        t.table_status() == Some(&TableStatus::Active)
            && t.global_secondary_indexes()
                .iter()
                .all(|g| g.index_status() == Some(&IndexStatus::Active))
    }))
}

async fn enable_ttl(client: &Client, table: &str, attribute: &str) -> Result<(), Error> {
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name(attribute)
                .build()
                .map_err(unbuildable)?,
        )
        .send()
        .await
        .map_err(|e| describe_error("UpdateTimeToLive", table, e))?;
    Ok(())
}

async fn create_table(client: &Client, spec: &TableSpec) -> Result<(), Error> {
    let mut attributes = vec![spec.hash];
    attributes.extend(spec.range);
    for gsi in &spec.gsis {
        attributes.extend(gsi_attributes(gsi));
    }
    attributes.sort_unstable_by_key(|a| a.name);
    attributes.dedup();
    let mut request = client
        .create_table()
        .table_name(&spec.name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key(spec.hash.name, KeyType::Hash)?);
    if let Some(range) = spec.range {
        request = request.key_schema(key(range.name, KeyType::Range)?);
    }
    for a in attributes {
        request = request.attribute_definitions(attribute(a)?);
    }
    for gsi in &spec.gsis {
        request = request.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(gsi.name)
                .set_key_schema(Some(gsi_keys(gsi)?))
                .projection(all_projection())
                .build()
                .map_err(unbuildable)?,
        );
    }
    if spec.kms_encryption {
        request = request.sse_specification(
            SseSpecification::builder()
                .enabled(true)
                .sse_type(SseType::Kms)
                .build(),
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
        enable_ttl(client, &spec.name, ttl).await?;
    }
    if spec.point_in_time_recovery {
        enable_pitr(client, &spec.name).await?;
    }
    Ok(())
}

/// An index's key attributes: its hash, and its range when it has one.
fn gsi_attributes(gsi: &Gsi) -> impl Iterator<Item = KeyAttr> {
    std::iter::once(gsi.hash).chain(gsi.range)
}

fn gsi_keys(gsi: &Gsi) -> Result<Vec<KeySchemaElement>, Error> {
    let mut keys = vec![key(gsi.hash.name, KeyType::Hash)?];
    if let Some(range) = gsi.range {
        keys.push(key(range.name, KeyType::Range)?);
    }
    Ok(keys)
}

fn all_projection() -> Projection {
    Projection::builder()
        .projection_type(ProjectionType::All)
        .build()
}

async fn enable_pitr(client: &Client, table: &str) -> Result<(), Error> {
    client
        .update_continuous_backups()
        .table_name(table)
        .point_in_time_recovery_specification(
            PointInTimeRecoverySpecification::builder()
                .point_in_time_recovery_enabled(true)
                .build()
                .map_err(unbuildable)?,
        )
        .send()
        .await
        .map_err(|e| describe_error("UpdateContinuousBackups", table, e))?;
    Ok(())
}
