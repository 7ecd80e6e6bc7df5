//! Names the console shows: state names for await steps. (Machine names are the release's
//! resource names, `crate::lowering::names`.)
//!
//! State names must be unique, at most 80 characters, and readable. Authored step names can be
//! anything (unicode, 200 characters, names that differ only in punctuation), so the mapping is
//! sanitise → shorten → disambiguate, and every step is deterministic: the same contract always
//! gets the same names, and a name never depends on the order collisions are discovered in.

use crate::lowering::names::short_hash;

/// Step Functions' limit on state names.
pub const MAX_NAME: usize = 80;

/// Length as asl-validator's JSON-schema regex counts it (UTF-16 code units). AWS counts Unicode
/// characters, which is never more, so staying under this satisfies both.
pub fn name_len(name: &str) -> usize {
    name.encode_utf16().count()
}

/// Removes what makes a state name unreadable or illegal: control characters, line breaks and
/// runs of whitespace.
pub fn sanitise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut pending_space = false;
    for c in name.chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// Cuts `name` so that `name` plus `reserve` UTF-16 units fits in [`MAX_NAME`], on a character
/// boundary, without a trailing space.
fn cut(name: &str, reserve: usize) -> String {
    let budget = MAX_NAME.saturating_sub(reserve);
    let mut out = String::new();
    let mut used = 0;
    for c in name.chars() {
        let w = c.len_utf16();
        if used + w > budget {
            break;
        }
        out.push(c);
        used += w;
    }
    out.trim_end().to_string()
}

/// The readable state name for an await step: the authored name when it already reads as an
/// await ("Await Restaurant Decision"), otherwise prefixed ("Await: Payment Provider").
pub fn await_state_base(authored: &str) -> String {
    let clean = sanitise(authored);
    if clean.is_empty() {
        return "Await: unnamed step".to_string();
    }
    if clean.to_lowercase().starts_with("await") {
        clean
    } else {
        format!("Await: {clean}")
    }
}

/// Assigns unique state names to await steps, avoiding `reserved` (the driver's fixed states).
///
/// A base name that is too long, or that two steps (or a fixed state) share, gets a suffix
/// ` ~<7 hex>` from a hash of the step's index and authored name; the readable part is cut to
/// make room. Because the suffix depends only on the step itself, adding a step elsewhere
/// never renames an existing state.
pub fn assign_await_names(steps: &[(u32, &str)], reserved: &[&str]) -> Vec<String> {
    let bases: Vec<String> = steps.iter().map(|(_, a)| await_state_base(a)).collect();
    let mut names = Vec::with_capacity(steps.len());
    for (i, ((index, authored), base)) in steps.iter().zip(&bases).enumerate() {
        let clashes = reserved.iter().any(|r| r == base)
            || bases.iter().enumerate().any(|(j, b)| j != i && b == base);
        if !clashes && name_len(base) <= MAX_NAME {
            names.push(base.clone());
        } else {
            let tag = short_hash(&[&index.to_string(), authored], 7);
            let suffix = format!(" ~{tag}");
            names.push(format!("{}{suffix}", cut(base, name_len(&suffix))));
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn await_names_read_as_sentences() {
        let names = assign_await_names(
            &[(2, "Await Restaurant Decision"), (4, "payment provider")],
            &[],
        );
        assert_eq!(
            names,
            vec!["Await Restaurant Decision", "Await: payment provider"]
        );
    }

    #[test]
    fn colliding_and_long_names_get_stable_suffixes() {
        let long_a = format!("{}A", "x".repeat(199));
        let long_b = format!("{}B", "x".repeat(199));
        let names = assign_await_names(
            &[(1, &long_a), (2, &long_b), (3, "Await  X"), (4, "Await X")],
            &[],
        );
        assert!(names.iter().all(|n| name_len(n) <= MAX_NAME), "{names:?}");
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        // Deterministic: recomputing gives the same names, and a step's name does not depend on
        // its neighbours' order.
        let again = assign_await_names(
            &[(4, "Await X"), (3, "Await  X"), (2, &long_b), (1, &long_a)],
            &[],
        );
        assert_eq!(again[0], names[3]);
        assert_eq!(again[3], names[0]);
    }

    #[test]
    fn reserved_names_are_avoided() {
        let names = assign_await_names(
            &[(0, "Await external completion")],
            &["Await external completion"],
        );
        assert_ne!(names[0], "Await external completion");
        assert!(names[0].starts_with("Await external completion ~"));
    }

    #[test]
    fn unicode_is_kept_and_counted_in_utf16_units() {
        let name = format!("Await {}", "🍜".repeat(60));
        let names = assign_await_names(&[(0, &name)], &[]);
        assert!(name_len(&names[0]) <= MAX_NAME);
        assert!(names[0].contains('🍜'));
    }
}
