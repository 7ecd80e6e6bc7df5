//! `tpf-sfn tables create`: TPF's tables and its AWS host's callback-binding table, as TPF's
//! template makes them, created where missing, compared (and with `--fix` completed) where they
//! exist.

use crate::stdio::outln;
use serde_json::json;

use crate::aws::tables::{create_all_with, TableKey, TableNames};
use crate::cli::{Format, TableArgs, TablesCreateArgs};
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use tpf_sfn_wakepath::aws::table_names::RETIRED_WAKEUP_KEY;

/// Table names from `--prefix` and `--table KEY=NAME`. Action API v1's `wakeup-table` is
/// `ACTION_API_V1_RETIRED`.
pub fn table_names(args: &TableArgs) -> Result<TableNames, Failure> {
    let mut names = TableNames::with_prefix(&args.prefix);
    for entry in &args.tables {
        let key = entry
            .split_once('=')
            .map_or(entry.as_str(), |(k, _)| k)
            .trim();
        if key == RETIRED_WAKEUP_KEY {
            return Err(retired_wakeup_table(entry).into());
        }
        let ok = entry
            .split_once('=')
            .filter(|(_, name)| !name.trim().is_empty())
            .is_some_and(|(key, name)| names.set(key.trim(), name.trim()));
        if !ok {
            return Err(Error::new(
                "TABLE_OVERRIDE",
                format!("`--table {entry}` is not KEY=NAME with a known key"),
            )
            .with_hint(format!("keys: {}", TableKey::listing()))
            .into());
        }
    }
    for name in names.all() {
        check_table_name(name)?;
    }
    Ok(names)
}

/// `--table wakeup-table=NAME` named Action API v1's wakeup table, which nothing reads or
/// writes any more: a gateway driver parks on TPF's callback binding.
fn retired_wakeup_table(entry: &str) -> Error {
    Error::new(
        tpf_sfn_compiler::config::retired::CODE,
        format!(
            "`--table {entry}` names Action API v1's wakeup table, which is retired: TPF serves \
             its action gateway only, and a gateway driver parks on TPF's callback binding"
        ),
    )
    .with_location("--table")
    .with_hint(format!(
        "drop the flag; the binding table is `--table callback-binding-table=NAME` (keys: {})",
        TableKey::listing()
    ))
}

/// `TABLE_NAME_INVALID` unless `name` is a DynamoDB table name: 3 to 255 characters of
/// `a-z A-Z 0-9 _ . -`.
fn check_table_name(name: &str) -> Result<(), Error> {
    if crate::aws::tables::is_table_name(name) {
        return Ok(());
    }
    Err(Error::new(
        "TABLE_NAME_INVALID",
        format!("`{name}` is not a DynamoDB table name"),
    )
    .with_hint(
        "a table name is 3 to 255 characters of letters, digits, `_`, `.` and `-`; check --prefix and --table",
    ))
}

/// The flags that give `args`' names again (for commands a command prints).
pub fn flags(args: &TableArgs) -> String {
    let mut out = String::new();
    if !args.prefix.is_empty() {
        out.push_str(&format!(" --prefix {}", args.prefix));
    }
    for entry in &args.tables {
        out.push_str(&format!(" --table {entry}"));
    }
    out
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new("RUNTIME", "cannot start the async runtime")
                .with_source(e)
                .with_hint("the machine is out of threads or memory; free some and run again")
                .into()
        })
}

pub fn create(args: &TablesCreateArgs) -> CmdResult {
    let names = table_names(&args.tables)?;
    let rt = runtime()?;
    let outcomes = rt.block_on(async {
        let config = args.connection.load().await?;
        let client = aws_sdk_dynamodb::Client::new(&config);
        create_all_with(&client, &names, args.fix).await
    });
    let outcomes = outcomes?;
    match args.format {
        Format::Text => {
            for o in &outcomes {
                let what = if o.created {
                    "created"
                } else if o.open_gaps().next().is_some() {
                    "differs"
                } else if o.gaps.is_empty() {
                    "exists "
                } else {
                    "fixed  "
                };
                outln!("{what} {}", o.name);
                for g in &o.gaps {
                    if g.fixed {
                        outln!("  fixed:   {}", g.what);
                    } else {
                        outln!("  missing: {}\n    = hint: {}", g.what, g.hint);
                    }
                }
            }
        }
        Format::Json => {
            let tables: Vec<_> = outcomes
                .iter()
                .map(|o| {
                    json!({
                        "table": o.name,
                        "created": o.created,
                        "gaps": o.gaps.iter().map(|g| json!({
                            "what": g.what, "hint": g.hint, "fixable": g.fixable, "fixed": g.fixed,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            outln!("{}", json!({ "tables": tables }));
        }
    }
    if outcomes.iter().any(|o| o.open_gaps().next().is_some()) {
        return Err(Failure::Findings);
    }
    Ok(())
}
