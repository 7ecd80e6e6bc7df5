//! `simulate --scenario NAME`: the scenario a name means. An unambiguous start of a name
//! (`tpf-22`) picks its one scenario; a name that matches nothing gets the nearest names as
//! "did you mean".

use crate::error::Error;

/// How many names an error offers.
const SHOWN: usize = 5;

/// The item of `all` whose name (`name_of`) `name` means.
pub fn find_by<'a, T>(
    all: &'a [T],
    name_of: impl Fn(&T) -> &str,
    name: &str,
) -> Result<&'a T, Error> {
    if let Some(exact) = all.iter().find(|s| name_of(s) == name) {
        return Ok(exact);
    }
    let started: Vec<&T> = all
        .iter()
        .filter(|s| !name.is_empty() && name_of(s).starts_with(name))
        .collect();
    match started.as_slice() {
        [one] => return Ok(one),
        [] => {}
        many => {
            return Err(Error::new(
                "SCENARIO_AMBIGUOUS",
                format!("{name:?} starts {} scenario names", many.len()),
            )
            .with_hint(format!(
                "name one of them: {}",
                quoted(many.iter().map(|s| name_of(s)))
            )))
        }
    }
    let mut near: Vec<(f64, &str)> = all
        .iter()
        .map(|s| (closeness(name, name_of(s)), name_of(s)))
        .filter(|(c, _)| *c >= 0.7)
        .collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0));
    let list = format!(
        "`tpf-sfn simulate --list` shows the {} scenarios of this contract",
        all.len()
    );
    let hint = if near.is_empty() {
        list
    } else {
        format!(
            "did you mean {}? {list}",
            quoted(near.into_iter().map(|(_, n)| n))
        )
    };
    Err(Error::new("UNKNOWN_SCENARIO", format!("no scenario named {name:?}")).with_hint(hint))
}

/// How alike a typed name is to a scenario's name, on the scale of Jaro-Winkler similarity
/// (1 = equal).
fn closeness(typed: &str, name: &str) -> f64 {
    strsim::jaro_winkler(typed, name)
}

/// Names as a user types them: quoted; the first few only.
fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    let mut shown: Vec<String> = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("\"{n}\""))
        .collect();
    if names.len() > SHOWN {
        shown.push(format!("… ({} more)", names.len() - SHOWN));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &[
        "tpf-01-lost-ingress-response",
        "tpf-21-retry-exhaustion-redrive",
        "tpf-22-await-deadline",
        "second-await",
        "sequential-awaits",
    ];

    fn find<'a>(all: &'a [&'a str], name: &str) -> Result<&'a &'a str, Error> {
        find_by(all, |s| s, name)
    }

    #[test]
    fn any_unambiguous_start_picks_its_scenario() {
        for typed in ["tpf-01", "tpf-22", "second", NAMES[4]] {
            let found = find(NAMES, typed).unwrap();
            assert!(found.starts_with(typed), "{typed} → {found}");
        }
    }

    #[test]
    fn a_start_shared_by_several_names_them() {
        let e = find(NAMES, "tpf-2").unwrap_err();
        assert_eq!(e.code(), "SCENARIO_AMBIGUOUS");
        let hint = e.hint().unwrap();
        assert!(
            hint.contains("\"tpf-21-retry-exhaustion-redrive\"")
                && hint.contains("\"tpf-22-await-deadline\""),
            "{hint}"
        );
    }

    #[test]
    fn a_typo_gets_did_you_mean() {
        let e = find(NAMES, "tpf-22-await-dedline").unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_SCENARIO");
        let hint = e.hint().unwrap();
        assert!(
            hint.starts_with("did you mean \"tpf-22-await-deadline\""),
            "{hint}"
        );
        let e = find(NAMES, "zzz").unwrap_err();
        assert!(
            e.hint()
                .unwrap()
                .starts_with("`tpf-sfn simulate --list` shows the 5"),
            "{:?}",
            e.hint()
        );
    }
}
