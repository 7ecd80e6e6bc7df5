//! TPF's table names: the `pipeline.orchestrator.dynamo.*` config keys that name them and the
//! defaults. Apart from the creation in [`super::tables`]: the command line's flags take these
//! keys in every build, with or without the AWS SDK.

use tpf_wire::gateway::binding as callback_binding;

/// Table names, defaulting to TPF's (`pipeline.orchestrator.dynamo.*` config keys and its AWS
/// host's callback-binding table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableNames {
    /// `execution-table`
    pub execution: String,
    /// `execution-key-table`
    pub execution_key: String,
    /// `execution-payload-table`
    pub execution_payload: String,
    /// `await-unit-table`
    pub await_unit: String,
    /// `await-interaction-table`
    pub await_interaction: String,
    /// `await-interaction-key-table`
    pub await_interaction_key: String,
    /// `await-admission-table`
    pub await_admission: String,
    /// `release-table`
    pub release: String,
    /// `callback-binding-table`: TPF's callback-binding table (its AWS host's
    /// `TPF_AWS_DURABLE_BINDING_TABLE`), which the gateway's drivers register and bind in.
    pub callback_binding: String,
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
            execution_payload: name("tpf_execution_payload"),
            await_unit: name("tpf_await_unit"),
            await_interaction: name("tpf_await_interaction"),
            await_interaction_key: name("tpf_await_interaction_key"),
            await_admission: name("tpf_await_admission"),
            release: name("tpf_release_registry"),
            callback_binding: name(callback_binding::TABLE),
        }
    }

    /// Every name, in [`TableKey::ALL`]'s order (TPF's tables first).
    pub fn all(&self) -> [&str; TableKey::ALL.len()] {
        TableKey::ALL.map(|key| self.get(key))
    }

    /// The table named by `key`.
    pub fn get(&self, key: TableKey) -> &str {
        match key {
            TableKey::Execution => &self.execution,
            TableKey::ExecutionKey => &self.execution_key,
            TableKey::ExecutionPayload => &self.execution_payload,
            TableKey::AwaitUnit => &self.await_unit,
            TableKey::AwaitInteraction => &self.await_interaction,
            TableKey::AwaitInteractionKey => &self.await_interaction_key,
            TableKey::AwaitAdmission => &self.await_admission,
            TableKey::Release => &self.release,
            TableKey::CallbackBinding => &self.callback_binding,
        }
    }

    fn slot(&mut self, key: TableKey) -> &mut String {
        match key {
            TableKey::Execution => &mut self.execution,
            TableKey::ExecutionKey => &mut self.execution_key,
            TableKey::ExecutionPayload => &mut self.execution_payload,
            TableKey::AwaitUnit => &mut self.await_unit,
            TableKey::AwaitInteraction => &mut self.await_interaction,
            TableKey::AwaitInteractionKey => &mut self.await_interaction_key,
            TableKey::AwaitAdmission => &mut self.await_admission,
            TableKey::Release => &mut self.release,
            TableKey::CallbackBinding => &mut self.callback_binding,
        }
    }

    /// Overrides by TPF config key (`execution-table`, ...).
    /// Returns false for an unknown key.
    pub fn set(&mut self, config_key: &str, table: &str) -> bool {
        let Some(key) = TableKey::parse(config_key) else {
            return false;
        };
        *self.slot(key) = table.to_owned();
        true
    }
}

/// One table by the key `--table KEY=NAME` names it with: TPF's
/// `pipeline.orchestrator.dynamo.*` config key, or `callback-binding-table` for its AWS host's
/// binding table. The one list of keys: the CLI's help and its errors are built from [`TableKey::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKey {
    Execution,
    ExecutionKey,
    ExecutionPayload,
    AwaitUnit,
    AwaitInteraction,
    AwaitInteractionKey,
    AwaitAdmission,
    Release,
    CallbackBinding,
}

impl TableKey {
    /// Every key, TPF's tables first.
    pub const ALL: [TableKey; 9] = [
        TableKey::Execution,
        TableKey::ExecutionKey,
        TableKey::ExecutionPayload,
        TableKey::AwaitUnit,
        TableKey::AwaitInteraction,
        TableKey::AwaitInteractionKey,
        TableKey::AwaitAdmission,
        TableKey::Release,
        TableKey::CallbackBinding,
    ];

    /// The config key, e.g. `execution-table`.
    pub fn config_key(self) -> &'static str {
        match self {
            TableKey::Execution => "execution-table",
            TableKey::ExecutionKey => "execution-key-table",
            TableKey::ExecutionPayload => "execution-payload-table",
            TableKey::AwaitUnit => "await-unit-table",
            TableKey::AwaitInteraction => "await-interaction-table",
            TableKey::AwaitInteractionKey => "await-interaction-key-table",
            TableKey::AwaitAdmission => "await-admission-table",
            TableKey::Release => "release-table",
            TableKey::CallbackBinding => "callback-binding-table",
        }
    }

    /// The key whose config key is `config_key`.
    pub fn parse(config_key: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|key| key.config_key() == config_key)
    }

    /// Every config key, comma-separated (for help and hints).
    pub fn listing() -> String {
        Self::ALL.map(Self::config_key).join(", ")
    }
}

/// `--table`'s key of Action API v1's wakeup table, retired with it: the command line refuses it
/// as such (`ACTION_API_V1_RETIRED`) rather than as an unknown key.
pub const RETIRED_WAKEUP_KEY: &str = "wakeup-table";

/// DynamoDB's rule for a table name: 3 to 255 characters of `a-z A-Z 0-9 _ . -`.
pub fn is_table_name(name: &str) -> bool {
    (3..=255).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::{TableKey, TableNames, RETIRED_WAKEUP_KEY};

    /// Every key names its own table: setting each to a distinct name changes every field
    /// once, so a key missing from `ALL` (or two keys on one field) leaves a default behind.
    #[test]
    fn every_key_sets_its_own_table() {
        let mut names = TableNames::with_prefix("");
        for key in TableKey::ALL {
            assert!(names.set(key.config_key(), &format!("t_{}", key.config_key())));
            assert_eq!(TableKey::parse(key.config_key()), Some(key));
        }
        let defaults = TableNames::with_prefix("");
        for (set, default) in names.all().iter().zip(defaults.all()) {
            assert_ne!(*set, default, "a field kept its default name");
        }
        let mut all = names.all().to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), TableKey::ALL.len(), "two keys share a table");
        assert!(!names.set("unknown-table", "x"));
    }

    #[test]
    fn the_listing_names_today_s_tables() {
        let listing = TableKey::listing();
        for key in [
            "execution-payload-table",
            "await-admission-table",
            "callback-binding-table",
        ] {
            assert!(listing.contains(key), "{listing}");
        }
        // Action API v1's wakeup table is not one of them.
        assert!(!listing.contains(RETIRED_WAKEUP_KEY), "{listing}");
        assert_eq!(TableKey::parse(RETIRED_WAKEUP_KEY), None);
    }
}
