//! `simulate --scenario NAME`: the scenario a name means. Scenario names are
//! `family/step` (`deadline-timeout/Await Restaurant Decision`), so a family's name alone, or
//! any other unambiguous start of a name, picks its one scenario; a name that matches nothing
//! gets the nearest names as "did you mean".

use tpf_sfn_mapping::scenario::Scenario;

use crate::error::Error;

/// How many names an error offers.
const SHOWN: usize = 5;

pub fn find<'a>(all: &'a [Scenario], name: &str) -> Result<&'a Scenario, Error> {
    find_by(all, |s| s.name.as_str(), name)
}

/// [`find`] over any named items (the gateway world's catalogue too).
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

/// How alike a typed name is to a scenario's name, or to its family (the part before `/`), on
/// the scale of Jaro-Winkler similarity (1 = equal).
fn closeness(typed: &str, name: &str) -> f64 {
    let family = name.split('/').next().unwrap_or(name);
    strsim::jaro_winkler(typed, name).max(strsim::jaro_winkler(typed, family))
}

/// Names as a user types them: quoted, since most hold spaces; the first few only.
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

    fn scenarios(names: &[&str]) -> Vec<Scenario> {
        names
            .iter()
            .map(|n| serde_json::from_value(serde_json::json!({ "name": n })).unwrap())
            .collect()
    }

    const NAMES: &[&str] = &[
        "happy-path",
        "deadline-timeout/Await Restaurant Decision",
        "late-completion/Await Restaurant Decision",
        "retry-exhausted/Validate Order",
        "retry-exhausted/Charge Card",
    ];

    #[test]
    fn a_family_alone_or_any_unambiguous_start_picks_its_scenario() {
        let all = scenarios(NAMES);
        for typed in [
            "deadline-timeout",
            "deadline",
            "late-completion/Await",
            NAMES[0],
        ] {
            let found = find(&all, typed).unwrap();
            assert!(found.name.starts_with(typed), "{typed} → {}", found.name);
        }
    }

    #[test]
    fn a_start_shared_by_several_names_them() {
        let all = scenarios(NAMES);
        let e = find(&all, "retry-exhausted").unwrap_err();
        assert_eq!(e.code(), "SCENARIO_AMBIGUOUS");
        let hint = e.hint().unwrap();
        assert!(
            hint.contains("\"retry-exhausted/Validate Order\"")
                && hint.contains("\"retry-exhausted/Charge Card\""),
            "{hint}"
        );
    }

    #[test]
    fn a_typo_gets_did_you_mean() {
        let all = scenarios(NAMES);
        let e = find(&all, "deadline-timout").unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_SCENARIO");
        let hint = e.hint().unwrap();
        assert!(
            hint.starts_with("did you mean \"deadline-timeout/Await Restaurant Decision\""),
            "{hint}"
        );
        let e = find(&all, "zzz").unwrap_err();
        assert!(
            e.hint()
                .unwrap()
                .starts_with("`tpf-sfn simulate --list` shows the 5"),
            "{:?}",
            e.hint()
        );
    }
}
