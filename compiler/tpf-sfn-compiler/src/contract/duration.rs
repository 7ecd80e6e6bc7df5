//! Java `Duration` text, as today's TPF writes a deferred completion's `timeout`.
//!
//! TPF writes `Duration.toString()` (`PT30M`, `PT48H`, `PT0.5S`: never a day part) and its
//! YAML reader takes `Duration.parse` text, which also allows days and signs. The grammar is
//! Java's own and narrower than ISO 8601's (no years, months or weeks), so a general ISO 8601
//! crate would accept text TPF cannot have written; this reads exactly `Duration.parse`'s form.

/// Milliseconds of a `Duration.parse` text, truncated like `Duration.toMillis()`; `None` when
/// the text is not one, or is out of range.
pub fn java_duration_ms(text: &str) -> Option<i64> {
    let upper = text.to_ascii_uppercase();
    let (negative, rest) = sign(&upper);
    let rest = rest.strip_prefix('P')?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => {
            // `PT` with nothing after it is refused by Java.
            if t.is_empty() {
                return None;
            }
            (d, Some(t))
        }
        None => (rest, None),
    };
    let mut nanos: i128 = 0;
    let mut any = false;
    if !date.is_empty() {
        let days = date.strip_suffix('D')?;
        nanos += whole(days)? * 86_400 * 1_000_000_000;
        any = true;
    }
    if let Some(mut t) = time {
        for (unit, scale) in [('H', 3_600_i128), ('M', 60)] {
            if let Some(at) = t.find(unit) {
                let (n, tail) = t.split_at(at);
                nanos += whole(n)? * scale * 1_000_000_000;
                t = &tail[1..];
                any = true;
            }
        }
        if !t.is_empty() {
            nanos += seconds(t.strip_suffix('S')?)?;
            any = true;
        }
    }
    if !any {
        return None;
    }
    let nanos = if negative { -nanos } else { nanos };
    // Java's toMillis divides toward negative infinity for negative durations.
    i64::try_from(nanos.div_euclid(1_000_000)).ok()
}

fn sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// A signed integer part (`30`, `-5`, `+2`).
fn whole(text: &str) -> Option<i128> {
    let (negative, digits) = sign(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 20 {
        return None;
    }
    let n: i128 = digits.parse().ok()?;
    Some(if negative { -n } else { n })
}

/// A signed seconds part with up to nine fraction digits (`0.5`, `-1.250`), in nanoseconds.
fn seconds(text: &str) -> Option<i128> {
    let (negative, body) = sign(text);
    let (int, frac) = match body.split_once(['.', ',']) {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let mut n = whole(int)? * 1_000_000_000;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let padded = format!("{f:0<9}");
        n += padded.parse::<i128>().ok()?;
    }
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::java_duration_ms;

    #[test]
    fn reads_what_java_writes_and_parses() {
        for (text, ms) in [
            ("PT30M", 30 * 60 * 1000),
            ("PT48H", 48 * 3_600_000),
            ("P2D", 48 * 3_600_000),
            ("PT1H30M", 90 * 60 * 1000),
            ("PT0.5S", 500),
            ("PT0.0001S", 0),
            ("pt15s", 15_000),
            ("PT-5S", -5_000),
            ("-PT5S", -5_000),
            ("PT-0.5S", -500),
            ("P1DT1S", 86_401_000),
        ] {
            assert_eq!(java_duration_ms(text), Some(ms), "{text}");
        }
    }

    #[test]
    fn refuses_what_java_refuses() {
        for text in [
            "",
            "P",
            "PT",
            "30M",
            "PT30",
            "P1Y",
            "P1W",
            "P1M",
            "PTM",
            "PT1.S",
            "PT1H2H",
            "PT5S1M",
            "PT1.0000000001S",
            "P1DT",
        ] {
            assert_eq!(java_duration_ms(text), None, "{text}");
        }
    }
}
