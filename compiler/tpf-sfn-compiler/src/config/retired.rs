//! Action API v1's bindings (`http`, `lambda`, `queue`), retired: TPF serves its action gateway
//! and no parallel execution API, so a driver that calls `process-work-item` fails at its first
//! call. Naming one, by `--binding`, by `binding.kind` or by its `[binding.<kind>]` table, is
//! `ACTION_API_V1_RETIRED` with the gateway binding's keys as the way out, never a generic
//! unknown-key error. So is every other key or table only v1 read ([`RETIRED_KEYS`]): its
//! sweep-once's bounds and call timeout, its wakeup table and its transport retry.

use super::{BindingKind, DriverConfig};
use crate::diagnostic::{Diagnostic, Diagnostics, Location};

pub const CODE: &str = "ACTION_API_V1_RETIRED";

/// Where the gateway binding is named: the keys a user sets instead.
pub const HINT: &str = "use the gateway binding: drop --binding (or pass `--binding gateway`) and set \
     binding.kind = \"gateway\" with [binding.gateway] function-arn (a numbered version of TPF's action \
     gateway), starter-function-arn and, for the queue transport, transport = \"queue\" and queue-url; \
     `tpf-sfn init` writes the table";

fn refusal(location: Location, what: String) -> Diagnostic {
    Diagnostic::error(
        CODE,
        location,
        format!(
            "{what} is Action API v1's, which is retired: TPF serves its action gateway only, and \
             a driver compiled for Action API v1 would fail at its first call"
        ),
    )
    .with_hint(HINT)
}

/// `[binding.http]`, `[binding.lambda]` or `[binding.queue]` in the file's raw TOML, each
/// refused where it stands.
pub(super) fn tables(file: &str, table: &toml::Table) -> Vec<Diagnostic> {
    let Some(binding) = table.get("binding").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    BindingKind::ACTION_API_V1
        .iter()
        .map(|k| k.as_str())
        .filter(|k| binding.contains_key(*k))
        .map(|k| {
            refusal(
                Location::pointer(file, format!("binding.{k}")),
                format!("the table [binding.{k}]"),
            )
        })
        .collect()
}

/// A key or table only Action API v1 read: where it stands, why it is gone, what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetiredKey {
    pub section: &'static str,
    /// `None`: the whole `[section]` table.
    pub key: Option<&'static str>,
    /// What it configured, completing "… , which is retired".
    pub served: &'static str,
    pub hint: &'static str,
}

/// Where a configuration that still bounds v1's sweep-once is pointed instead.
pub const SWEEP_ONCE_HINT: &str = "delete the key: TPF's SWEEP takes no limit and no concurrency; who sweeps is sweeper.mode (\"driver\" or \"schedule\") and how often is sweeper.schedule";

/// Every key and table of Action API v1 a configuration may still carry, each refused where it
/// stands rather than as an unknown key.
pub const RETIRED_KEYS: [RetiredKey; 5] = [
    RetiredKey {
        section: "sweeper",
        key: Some("limit"),
        served: "bounded Action API v1's sweep-once",
        hint: SWEEP_ONCE_HINT,
    },
    RetiredKey {
        section: "sweeper",
        key: Some("max-concurrency"),
        served: "bounded Action API v1's sweep-once",
        hint: SWEEP_ONCE_HINT,
    },
    RetiredKey {
        section: "timeouts",
        key: Some("sweep-call-seconds"),
        served: "timed Action API v1's sweep-once call",
        hint: "delete the key: TPF's SWEEP is a gateway call like any other, timed by timeouts.action-call-seconds",
    },
    RetiredKey {
        section: "wakeup",
        key: None,
        served: "configured Action API v1's wakeup table (task tokens and the live-driver pointer) and its re-ask waits",
        hint: "delete the table: a gateway driver parks on TPF's callback binding (REGISTER_CALLBACK), in the binding table TPF's template makes and `tpf-sfn tables create` creates",
    },
    RetiredKey {
        section: "transport-retry",
        key: None,
        served: "retried Action API v1's action calls",
        hint: "delete the table: a gateway driver retries a gateway call as TPF's own driver retries its steps (6 attempts, 5 s doubling to 60 s), which no key changes",
    },
];

/// Every [`RETIRED_KEYS`] entry present in the file's raw TOML, each refused where it stands.
pub(super) fn keys(file: &str, table: &toml::Table) -> Vec<Diagnostic> {
    RETIRED_KEYS
        .iter()
        .filter_map(|r| {
            let section = table.get(r.section)?;
            let (pointer, what) = match r.key {
                None => (r.section.to_owned(), format!("the table [{}]", r.section)),
                Some(key) => {
                    section.as_table()?.get(key)?;
                    let dotted = format!("{}.{key}", r.section);
                    (dotted.clone(), dotted)
                }
            };
            Some(
                Diagnostic::error(
                    CODE,
                    Location::pointer(file, pointer),
                    format!(
                        "{what} {}, which is retired: TPF serves its action gateway only",
                        r.served
                    ),
                )
                .with_hint(r.hint),
            )
        })
        .collect()
}

impl DriverConfig {
    /// Refuses an Action API v1 binding: `flag` (`--binding`), which wins over the file's
    /// `binding.kind`, or else the file's.
    pub fn refuse_action_api_v1(
        &self,
        file: &str,
        flag: Option<BindingKind>,
    ) -> Result<(), Diagnostics> {
        let (kind, location) = match flag {
            Some(kind) => (kind, Location::file("--binding")),
            None => (self.binding.kind, Location::pointer(file, "binding.kind")),
        };
        if kind.is_action_api_v1() {
            let what = match flag {
                Some(_) => format!("--binding {}", kind.as_str()),
                None => format!("binding.kind = \"{}\"", kind.as_str()),
            };
            return Err(refusal(location, what).into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SweepMode;

    #[test]
    fn every_v1_name_is_refused_with_its_location_and_the_gateway_as_the_way_out() {
        for kind in BindingKind::ACTION_API_V1 {
            let name = kind.as_str();
            let text = format!("[binding]\nkind = \"{name}\"\n");
            let config = DriverConfig::from_toml("tpf-sfn.toml", &text).unwrap();
            let d = config
                .refuse_action_api_v1("tpf-sfn.toml", None)
                .unwrap_err();
            assert_eq!(d.0[0].code, CODE);
            assert_eq!(d.0[0].location.to_string(), "tpf-sfn.toml#binding.kind");
            assert!(d.0[0].hint.contains("[binding.gateway]"), "{}", d.0[0].hint);

            let d = DriverConfig::default()
                .refuse_action_api_v1("tpf-sfn.toml", Some(kind))
                .unwrap_err();
            assert_eq!(d.0[0].location.to_string(), "--binding");
            assert!(d.0[0].message.contains(&format!("--binding {name}")));

            let table = format!("[binding.{name}]\n");
            let d = DriverConfig::from_toml("tpf-sfn.toml", &table).unwrap_err();
            assert_eq!(d.0[0].code, CODE, "{table}: {d:?}");
            assert_eq!(
                d.0[0].location.pointer.as_deref(),
                Some(format!("binding.{name}").as_str())
            );
        }
        // The gateway passes, by the file or by the flag; `--binding gateway` wins over a file's
        // v1 kind.
        let v1 = DriverConfig::from_toml("f", "[binding]\nkind = \"http\"\n").unwrap();
        assert_eq!(
            v1.refuse_action_api_v1("f", Some(BindingKind::Gateway)),
            Ok(())
        );
        assert_eq!(
            DriverConfig::default().refuse_action_api_v1("f", None),
            Ok(())
        );
    }

    #[test]
    fn every_retired_key_is_refused_with_its_location_not_as_unknown() {
        for r in RETIRED_KEYS {
            let text = match r.key {
                Some(key) => format!("[{}]\n{key} = 10\n", r.section),
                None => format!("[{}]\n", r.section),
            };
            let d = DriverConfig::from_toml("tpf-sfn.toml", &text).unwrap_err();
            assert_eq!(d.0.len(), 1, "{d:?}");
            assert_eq!(d.0[0].code, CODE, "{text}: {d:?}");
            let pointer = r
                .key
                .map_or(r.section.to_owned(), |k| format!("{}.{k}", r.section));
            assert_eq!(d.0[0].location.pointer.as_deref(), Some(pointer.as_str()));
            assert_eq!(d.0[0].hint, r.hint);
            assert!(d.0[0].message.contains("retired"), "{}", d.0[0].message);
        }
        let both = DriverConfig::from_toml("f", "[sweeper]\nlimit = 1\nmax-concurrency = 2\n")
            .unwrap_err();
        assert_eq!(both.0.len(), 2, "{both:?}");
        // A whole retired table is refused with its keys inside it, once.
        let table = DriverConfig::from_toml(
            "f",
            "[wakeup]\ntable-name = \"tpf_sfn_wakeup\"\nrecheck-seconds = 60\n",
        )
        .unwrap_err();
        assert_eq!(table.0.len(), 1, "{table:?}");
        assert!(table.0[0].hint.contains("REGISTER_CALLBACK"), "{table:?}");
        // The keys that stay still parse.
        let kept = DriverConfig::from_toml(
            "f",
            "[sweeper]\nmode = \"schedule\"\nschedule = \"rate(2 minutes)\"\n[timeouts]\naction-call-seconds = 30\n",
        )
        .unwrap();
        assert_eq!(kept.sweeper.mode, SweepMode::Schedule);
        assert_eq!(kept.timeouts.action_call_seconds, 30);
    }
}
