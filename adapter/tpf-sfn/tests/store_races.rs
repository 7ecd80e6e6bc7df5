//! Same-key submits raced against the store: exactly one creation wins, every racer is answered
//! with the winner's record, and the winner's rows stay.
//!
//! The in-memory store must keep all three. The DynamoDB store on moto keeps them too, except
//! where moto 5.2.5 itself erases an acknowledged transaction's rows: its `TransactWriteItems`
//! deep-copies every table the transaction names before it starts and, when a condition fails,
//! puts those copies back, dropping whatever other requests committed in between (the
//! deviation is declared in docs/runtime.md, "Disagreements found"). The moto test therefore
//! records every write our store sends, shows that none of them removes a row, and states each
//! loss as moto's: an execution whose creation moto acknowledged and whose row is gone.

use crate::support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use aws_sdk_dynamodb::types::AttributeValue;
use tpf_model::store::conformance::{create_command, NOW};
use tpf_model::store::ExecutionStore;
use tpf_model::InMemoryStore;
use tpf_sfn::aws::dynamo_store::DynamoStore;
use tpf_sfn::aws::tables::{create_all, TableNames};
use tpf_wire::ids::scoped_execution_key;

const RACERS: usize = 8;
const ROUNDS: usize = 30;
const TENANT: &str = "t";

/// What one round of same-key submits came back with.
#[derive(Debug, Default)]
struct Round {
    /// Execution ids whose creation the store acknowledged (`duplicate: false`).
    created: Vec<String>,
    /// The execution id each answered racer was given.
    answered: Vec<String>,
    /// Racers the store answered with an error (a 503 from `serve`).
    refused: usize,
    /// The execution the key leads to after the round.
    after: Option<String>,
}

fn race<S: ExecutionStore + Sync>(store: &S, key: &str) -> Round {
    let barrier = Barrier::new(RACERS);
    let results: Vec<_> = std::thread::scope(|s| {
        let racers: Vec<_> = (0..RACERS)
            .map(|i| {
                let barrier = &barrier;
                s.spawn(move || {
                    // Each racer its own execution id, so a row tells whose creation it is.
                    let mut cmd = create_command(TENANT, key, NOW);
                    cmd.execution_id = format!("{}-{i}", cmd.execution_id);
                    barrier.wait();
                    store.create_or_get_execution(&cmd)
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut round = Round::default();
    for r in results {
        match r {
            Ok(got) => {
                if !got.duplicate {
                    round.created.push(got.record.execution_id.clone());
                }
                round.answered.push(got.record.execution_id);
            }
            Err(_) => round.refused += 1,
        }
    }
    round.after = store
        .get_execution_by_key(TENANT, key, NOW)
        .unwrap()
        .map(|r| r.execution_id);
    round
}

/// What a store owes a round: one creation, everyone answered with it, its row still there.
fn our_invariants(round: &Round) -> Result<(), String> {
    if round.created.len() != 1 {
        return Err(format!("{} creations acknowledged", round.created.len()));
    }
    let winner = &round.created[0];
    if round.refused > 0 || round.answered.iter().any(|a| a != winner) {
        return Err(format!(
            "racers answered {:?}, {} refused",
            round.answered, round.refused
        ));
    }
    if round.after.as_ref() != Some(winner) {
        return Err(format!("the key leads to {:?}, not {winner}", round.after));
    }
    Ok(())
}

fn unique_key() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "k-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

#[test]
fn the_memory_store_keeps_every_invariant_under_same_key_races() {
    let store = InMemoryStore::new();
    for _ in 0..ROUNDS {
        let round = race(&store, &unique_key());
        assert_eq!(our_invariants(&round), Ok(()), "{round:?}");
    }
}

#[test]
fn the_invariant_check_sees_a_lost_winner_and_a_second_creation() {
    let good = Round {
        created: vec!["a".into()],
        answered: vec!["a".into(), "a".into()],
        refused: 0,
        after: Some("a".into()),
    };
    assert_eq!(our_invariants(&good), Ok(()));
    let lost = Round {
        after: None,
        ..Round {
            created: good.created.clone(),
            answered: good.answered.clone(),
            ..Round::default()
        }
    };
    assert!(our_invariants(&lost).is_err());
    let twice = Round {
        created: vec!["a".into(), "b".into()],
        answered: vec!["a".into(), "b".into()],
        refused: 0,
        after: Some("b".into()),
    };
    assert!(our_invariants(&twice).is_err());
}

/// Records every DynamoDB write the store sends, by operation and kind of item.
#[derive(Debug, Default)]
struct Writes(Mutex<BTreeSet<String>>);

#[derive(Debug)]
struct Recorder(Arc<Writes>);

impl aws_sdk_dynamodb::config::Intercept for Recorder {
    fn name(&self) -> &'static str {
        "Recorder"
    }

    fn read_before_execution(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef<
            '_,
        >,
        _cfg: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        use aws_sdk_dynamodb::operation::{get_item, transact_write_items};
        let input = context.input();
        let what = if input.downcast_ref::<get_item::GetItemInput>().is_some() {
            "GetItem (read)".to_owned()
        } else if let Some(t) =
            input.downcast_ref::<transact_write_items::TransactWriteItemsInput>()
        {
            let kinds: BTreeSet<&str> = t
                .transact_items()
                .iter()
                .map(
                    |i| match (i.put(), i.delete(), i.update(), i.condition_check()) {
                        (Some(p), ..) if p.condition_expression().is_some() => "conditional Put",
                        (Some(_), ..) => "unconditional Put",
                        (_, Some(_), ..) => "Delete",
                        (_, _, Some(_), _) => "Update",
                        _ => "ConditionCheck",
                    },
                )
                .collect();
            format!("TransactWriteItems of {kinds:?}")
        } else {
            format!("other: {input:?}")
        };
        self.0 .0.lock().unwrap().insert(what);
        Ok(())
    }
}

#[test]
fn the_dynamo_store_on_moto_loses_nothing_moto_does_not_erase() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let conf = rt.block_on(support::moto_config());
    let writes = Arc::new(Writes::default());
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&conf)
            .interceptor(Recorder(writes.clone()))
            .build(),
    );
    let names = TableNames::with_prefix(&format!("race{}_", std::process::id()));
    // Created by another client: the recorder sees the store's calls only.
    rt.block_on(create_all(&aws_sdk_dynamodb::Client::new(&conf), &names))
        .expect("create tables");
    let store = DynamoStore::new(client, names, rt.handle().clone());

    let mut clean = 0;
    let mut moto_lost = Vec::new();
    for _ in 0..ROUNDS {
        let key = unique_key();
        let round = race(&store, &key);
        if our_invariants(&round).is_ok() {
            clean += 1;
            continue;
        }
        // Not clean: only moto's rollback may explain it. Each creation was acknowledged by a
        // TransactWriteItems that wrote the execution row and the key row pointing at it, and
        // nothing we send removes or replaces a row (checked below): a creation whose row is
        // gone, or whose key row no longer points at it, lost a write moto acknowledged.
        let key_row = rt
            .block_on(
                store
                    .client()
                    .get_item()
                    .table_name(&store.tables().execution_key)
                    .key(
                        "tenant_execution_key",
                        AttributeValue::S(scoped_execution_key(TENANT, &key)),
                    )
                    .consistent_read(true)
                    .send(),
            )
            .unwrap();
        let points_to = key_row
            .item()
            .and_then(|i| i.get("execution_id"))
            .and_then(|v| v.as_s().ok())
            .cloned();
        let gone: Vec<String> = round
            .created
            .iter()
            .filter_map(|id| {
                let row = store.get_execution(TENANT, id, NOW).unwrap().is_some();
                let keyed = points_to.as_ref() == Some(id);
                match (row, keyed) {
                    (true, true) => None,
                    (false, true) => Some(format!("{id}: execution row erased")),
                    (true, false) => Some(format!("{id}: key row erased")),
                    (false, false) => Some(format!("{id}: both rows erased")),
                }
            })
            .collect();
        assert!(
            !gone.is_empty(),
            "round {key} broke our invariants with every acknowledged write in place: the store's fault, not moto's: {round:?}"
        );
        moto_lost.push(format!(
            "{key}: {} creations acknowledged, {} racers refused (503); lost: {}",
            round.created.len(),
            round.refused,
            gone.join("; ")
        ));
    }
    let sent = writes.0.lock().unwrap().clone();
    let ours: BTreeSet<String> = [
        "GetItem (read)".to_owned(),
        "TransactWriteItems of {\"conditional Put\"}".to_owned(),
    ]
    .into();
    assert!(
        sent.is_subset(&ours),
        "the store sent more than reads and conditional puts during the races: {sent:?}"
    );
    eprintln!(
        "{clean} of {ROUNDS} rounds clean; moto erased acknowledged executions in {}:",
        moto_lost.len()
    );
    for l in &moto_lost {
        eprintln!("  {l}");
    }
}
