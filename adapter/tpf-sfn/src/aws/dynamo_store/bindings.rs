//! TPF's callback-binding table (`AwsDurableCallbackBindingRepository`) on DynamoDB, for
//! `serve --store dynamodb`'s gateway: the model's repository ([`Table`]) over this table's
//! rows. Every write is a put conditioned on the key being free (a taken key re-read), every
//! read consistent, rows in TPF's attributes (`tpf_wire::gateway::items`), so TPF's own
//! functions and the wake-up read what the host writes.

use tpf_model::gateway::{BindingRows, Put, Table};
use tpf_model::store::StoreError;
use tpf_wire::gateway::binding::attr;
use tpf_wire::java_error::JavaError;
use tpf_wire::records::Item;

use super::{DynamoStore, KeyQuery};
use crate::aws::dynamo_item::{from_sdk, s, to_sdk};

/// `attribute_not_exists(pk) AND attribute_not_exists(sk)`: TPF's condition on every write.
const KEY_FREE: &str = "attribute_not_exists(#pk) AND attribute_not_exists(#sk)";
const LATEST: &str = "#pk = :pk AND begins_with(#sk, :prefix)";

/// TPF's binding repository on DynamoDB.
pub type DynamoBindings = Table<DynamoRows>;

/// The table on DynamoDB, through the store's client, runtime and bounds.
#[derive(Debug, Clone)]
pub struct DynamoRows {
    store: DynamoStore,
    table: String,
}

/// A store failure as the gateway's function error: the exception TPF's repository lets
/// through (the AWS SDK's) is an unchecked exception out of the handler; its message says what
/// failed.
fn java(e: StoreError) -> JavaError {
    JavaError::illegal_state(crate::error::chain(&e))
}

impl DynamoRows {
    pub fn new(store: DynamoStore, table: impl Into<String>) -> Self {
        Self {
            store,
            table: table.into(),
        }
    }
}

fn text(item: &Item, name: &str) -> String {
    match item.get(name) {
        Some(tpf_wire::records::AttrValue::S(v)) => v.clone(),
        _ => String::new(),
    }
}

impl BindingRows for DynamoRows {
    fn row(&self, pk: &str, sk: &str) -> Result<Option<Item>, JavaError> {
        let key = vec![(attr::PK, s(pk.to_owned())), (attr::SK, s(sk.to_owned()))];
        Ok(self
            .store
            .get(&self.table, key)
            .map_err(java)?
            .as_ref()
            .map(from_sdk))
    }

    fn newest(&self, pk: &str, sk_prefix: &str) -> Result<Option<Item>, JavaError> {
        let q = KeyQuery {
            table: &self.table,
            index: None,
            condition: LATEST,
            values: vec![
                (":pk", s(pk.to_owned())),
                (":prefix", s(sk_prefix.to_owned())),
            ],
            forward: false,
        };
        let out = self
            .store
            .block(self.store.query(q).consistent_read(true).limit(1).send())
            .map_err(|e| java(super::unavailable("Query", e)))?;
        Ok(out.items().first().map(from_sdk))
    }

    fn put_if_free(&mut self, item: Item) -> Result<Put, JavaError> {
        let pk = text(&item, attr::PK);
        let sk = text(&item, attr::SK);
        if self
            .store
            .put_if(&self.table, to_sdk(&item), KEY_FREE, Vec::new())
            .map_err(java)?
        {
            return Ok(Put::Written);
        }
        Ok(Put::Taken(self.row(&pk, &sk)?))
    }
}
