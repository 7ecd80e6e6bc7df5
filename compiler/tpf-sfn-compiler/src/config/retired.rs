//! Action API v1's bindings (`http`, `lambda`, `queue`), retired: TPF serves its action gateway
//! and no parallel execution API, so a driver that calls `process-work-item` fails at its first
//! call. Naming one, by `--binding`, by `binding.kind` or by its `[binding.<kind>]` table, is
//! `ACTION_API_V1_RETIRED` with the gateway binding's keys as the way out, never a generic
//! unknown-key error. So is a key of v1's sweep-once (`sweeper.limit`,
//! `sweeper.max-concurrency`): TPF's `SWEEP` takes neither.

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

/// The `[sweeper]` keys only Action API v1's sweep-once read.
pub const SWEEP_ONCE_KEYS: [&str; 2] = ["limit", "max-concurrency"];

/// Where a configuration that still bounds v1's sweep-once is pointed instead.
pub const SWEEP_ONCE_HINT: &str = "delete the key: TPF's SWEEP takes no limit and no concurrency; who sweeps is sweeper.mode (\"driver\" or \"schedule\") and how often is sweeper.schedule";

/// `sweeper.limit` or `sweeper.max-concurrency` in the file's raw TOML, each refused where it
/// stands.
pub(super) fn sweeper_keys(file: &str, table: &toml::Table) -> Vec<Diagnostic> {
    let Some(sweeper) = table.get("sweeper").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    SWEEP_ONCE_KEYS
        .iter()
        .filter(|k| sweeper.contains_key(**k))
        .map(|k| {
            Diagnostic::error(
                CODE,
                Location::pointer(file, format!("sweeper.{k}")),
                format!(
                    "sweeper.{k} bounded Action API v1's sweep-once, which is retired: TPF serves \
                     its action gateway only, whose SWEEP takes no such bound"
                ),
            )
            .with_hint(SWEEP_ONCE_HINT)
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
    fn sweep_once_keys_are_refused_with_their_location_not_as_unknown() {
        for key in SWEEP_ONCE_KEYS {
            let text = format!("[sweeper]\nmode = \"driver\"\n{key} = 10\n");
            let d = DriverConfig::from_toml("tpf-sfn.toml", &text).unwrap_err();
            assert_eq!(d.0.len(), 1, "{d:?}");
            assert_eq!(d.0[0].code, CODE, "{key}: {d:?}");
            assert_eq!(
                d.0[0].location.pointer.as_deref(),
                Some(format!("sweeper.{key}").as_str())
            );
            assert!(d.0[0].hint.contains("sweeper.mode"), "{}", d.0[0].hint);
        }
        let both = DriverConfig::from_toml("f", "[sweeper]\nlimit = 1\nmax-concurrency = 2\n")
            .unwrap_err();
        assert_eq!(both.0.len(), 2, "{both:?}");
        // The keys that stay still parse.
        let kept = DriverConfig::from_toml(
            "f",
            "[sweeper]\nmode = \"schedule\"\nschedule = \"rate(2 minutes)\"\n",
        )
        .unwrap();
        assert_eq!(kept.sweeper.mode, SweepMode::Schedule);
    }
}
