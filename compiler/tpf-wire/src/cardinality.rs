//! Cardinality, exactly as TPF's `CardinalitySemantics.fromString` reads it, and the two
//! pipeline-wide facts TPF derives from the step cardinalities: which awaits are itemized and the
//! execution's result shape.
//!
//! The contract keeps YAML's spelling verbatim (the CSV pipeline writes `EXPANSION`), so every
//! consumer must normalise the same way TPF's runtime does or the two disagree about fan-out.

use crate::records::ResultShape;

/// TPF `CardinalitySemantics` after `fromString` normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cardinality {
    OneToOne,
    OneToMany,
    ManyToOne,
    ManyToMany,
}

/// Spellings TPF accepts, for hints.
pub const ACCEPTED_CARDINALITIES: &str =
    "ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE, MANY_TO_MANY, EXPANSION, REDUCTION";

impl Cardinality {
    pub fn as_str(self) -> &'static str {
        match self {
            Cardinality::OneToOne => "ONE_TO_ONE",
            Cardinality::OneToMany => "ONE_TO_MANY",
            Cardinality::ManyToOne => "MANY_TO_ONE",
            Cardinality::ManyToMany => "MANY_TO_MANY",
        }
    }

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

    /// `ManyToOne` and `ManyToMany` steps aggregate a stream
    /// (`PipelineExecutionService.firstAggregateStepIndex`: `ManyToOne` / `StepManyToMany`).
    pub fn aggregates(self) -> bool {
        matches!(self, Cardinality::ManyToOne | Cardinality::ManyToMany)
    }
}

/// Whether the step at `index` sees a stream: some earlier step fanned out and nothing reduced
/// it again (TPF's cardinality-as-unit-shape rule). A ONE_TO_ONE await there is itemized: one
/// unit, one interaction per item.
pub fn streams_into(cardinalities: &[Cardinality], index: usize) -> bool {
    let mut streaming = false;
    for c in cardinalities.iter().take(index) {
        match c {
            Cardinality::OneToMany | Cardinality::ManyToMany => streaming = true,
            Cardinality::ManyToOne => streaming = false,
            Cardinality::OneToOne => {}
        }
    }
    streaming
}

/// `ExecutionResultShapeResolver`: folding over the steps, a fan-out makes the result
/// `MATERIALIZED_MULTI`, a reduction makes it `SINGLE` again.
pub fn result_shape(cardinalities: &[Cardinality]) -> ResultShape {
    cardinalities
        .iter()
        .fold(ResultShape::Single, |shape, c| match c {
            Cardinality::OneToOne => shape,
            Cardinality::OneToMany | Cardinality::ManyToMany => ResultShape::MaterializedMulti,
            Cardinality::ManyToOne => ResultShape::Single,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Cardinality::*;

    #[test]
    fn normalises_like_tpf() {
        assert_eq!(Cardinality::from_tpf(" expansion "), Some(OneToMany));
        assert_eq!(Cardinality::from_tpf("Reduction"), Some(ManyToOne));
        assert_eq!(Cardinality::from_tpf("one_to_one"), Some(OneToOne));
        assert_eq!(Cardinality::from_tpf("MANY_TO_MANY"), Some(ManyToMany));
        assert_eq!(Cardinality::from_tpf("ONE-TO-ONE"), None);
        assert_eq!(Cardinality::from_tpf(""), None);
    }

    #[test]
    fn the_last_fan_out_or_reduction_decides_the_result_shape() {
        assert_eq!(result_shape(&[OneToOne]), ResultShape::Single);
        assert_eq!(
            result_shape(&[OneToMany, OneToOne]),
            ResultShape::MaterializedMulti
        );
        assert_eq!(result_shape(&[OneToMany, ManyToOne]), ResultShape::Single);
        assert!(streams_into(&[OneToMany, OneToOne], 1));
        assert!(!streams_into(&[OneToMany, ManyToOne, OneToOne], 2));
    }
}
