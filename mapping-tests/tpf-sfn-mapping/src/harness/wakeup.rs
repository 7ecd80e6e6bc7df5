//! The adapter-owned wakeup table (`tpf_sfn_wakeup`), in memory: the driver's live-generation
//! pointer (`sk = driver`) and parked tokens (`sk = wakeup`), in DynamoDB JSON as the driver's
//! `putItem` Parameters write them.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use tpf_sfn_wakeup::bridge::TokenRow;
use tpf_wire::wakeup::{self, attr};

#[derive(Debug, Clone, Default)]
pub struct WakeupTable {
    items: BTreeMap<(String, String), Map<String, Value>>,
}

impl WakeupTable {
    /// `PutItem` with the request's `Item` (DynamoDB JSON). Returns the key written.
    pub fn put(&mut self, item: &Value) -> Option<(String, String)> {
        let item = item.as_object()?;
        let pk = attr_s(item, wakeup::PK)?;
        let sk = attr_s(item, wakeup::SK)?;
        self.items.insert((pk.clone(), sk.clone()), item.clone());
        Some((pk, sk))
    }

    /// `GetItem` response: `{"Item": …}` or `{}` when absent, like DynamoDB.
    pub fn get(&self, key: &Value) -> Value {
        let (Some(pk), Some(sk)) = (
            key.as_object().and_then(|k| attr_s(k, wakeup::PK)),
            key.as_object().and_then(|k| attr_s(k, wakeup::SK)),
        ) else {
            return json!({});
        };
        match self.items.get(&(pk, sk)) {
            Some(item) => json!({ "Item": item }),
            None => json!({}),
        }
    }

    pub fn token(&self, tenant_id: &str, execution_id: &str) -> Option<TokenRow> {
        let item = self.items.get(&(
            wakeup::pk(tenant_id, execution_id),
            wakeup::WAKEUP_ROW.to_string(),
        ))?;
        Some(TokenRow {
            tenant_id: tenant_id.to_string(),
            execution_id: execution_id.to_string(),
            task_token: attr_s(item, attr::TASK_TOKEN)?,
            unit_id: attr_s(item, attr::UNIT_ID)?,
            execution_arn: attr_s(item, attr::EXECUTION_ARN)?,
        })
    }

    /// The live-driver pointer's execution ARN.
    pub fn driver(&self, tenant_id: &str, execution_id: &str) -> Option<String> {
        let item = self.items.get(&(
            wakeup::pk(tenant_id, execution_id),
            wakeup::DRIVER_ROW.to_string(),
        ))?;
        attr_s(item, attr::EXECUTION_ARN)
    }
}

fn attr_s(item: &Map<String, Value>, name: &str) -> Option<String> {
    item.get(name)?.get("S")?.as_str().map(str::to_string)
}
