//! Cardinality normalisation, exactly as TPF's `CardinalitySemantics.fromString`.
//!
//! The contract keeps YAML's spelling verbatim (the CSV pipeline writes `EXPANSION`), so every
//! consumer must normalise the same way TPF's runtime does or the two disagree about fan-out.

use super::model::Cardinality;

impl Cardinality {
    /// Trims, ignores case, maps the `EXPANSION`/`REDUCTION` aliases; `None` where TPF throws.
    pub fn from_tpf(raw: &str) -> Option<Cardinality> {
        let s = raw.trim();
        let is = |name: &str| s.eq_ignore_ascii_case(name);
        if is("ONE_TO_ONE") {
            Some(Cardinality::OneToOne)
        } else if is("ONE_TO_MANY") || is("EXPANSION") {
            Some(Cardinality::OneToMany)
        } else if is("MANY_TO_ONE") || is("REDUCTION") {
            Some(Cardinality::ManyToOne)
        } else if is("MANY_TO_MANY") {
            Some(Cardinality::ManyToMany)
        } else {
            None
        }
    }
}

/// Spellings TPF accepts, for hints.
pub const ACCEPTED_CARDINALITIES: &str =
    "ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE, MANY_TO_MANY, EXPANSION, REDUCTION";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_tpf() {
        assert_eq!(
            Cardinality::from_tpf(" expansion "),
            Some(Cardinality::OneToMany)
        );
        assert_eq!(
            Cardinality::from_tpf("Reduction"),
            Some(Cardinality::ManyToOne)
        );
        assert_eq!(
            Cardinality::from_tpf("one_to_one"),
            Some(Cardinality::OneToOne)
        );
        assert_eq!(
            Cardinality::from_tpf("MANY_TO_MANY"),
            Some(Cardinality::ManyToMany)
        );
        assert_eq!(Cardinality::from_tpf("ONE-TO-ONE"), None);
        assert_eq!(Cardinality::from_tpf(""), None);
    }
}
