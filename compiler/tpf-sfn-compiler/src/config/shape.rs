//! Shapes of the identifiers a config names: ARNs, queue URLs, AWS names.

pub(super) fn is_digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// `arn:<partition>:<service>:<region>:<12 digits>:<resource>` with non-empty partition and region.
pub(super) fn arn_resource<'a>(arn: &'a str, service: &str) -> Option<&'a str> {
    let mut parts = arn.splitn(6, ':');
    let ok = parts.next() == Some("arn")
        && parts.next().is_some_and(|p| !p.is_empty())
        && parts.next() == Some(service)
        && parts.next().is_some_and(|r| !r.is_empty())
        && parts.next().is_some_and(|a| is_digits(a, 12));
    if ok {
        parts.next()
    } else {
        None
    }
}

pub(super) fn is_function_arn(arn: &str) -> bool {
    let Some(res) = arn_resource(arn, "lambda") else {
        return false;
    };
    let mut parts = res.split(':');
    parts.next() == Some("function")
        && parts.next().is_some_and(is_name)
        && parts.next().is_none_or(is_name)
        && parts.next().is_none()
}

/// The qualifier of a Lambda function ARN (`Some(None)`: unqualified), `None` when `arn` is
/// not a function ARN.
/// Lambda's `$LATEST` qualifier counts: it names the unpublished code.
pub(super) fn function_qualifier(arn: &str) -> Option<Option<&str>> {
    if let Some(base) = arn.strip_suffix(":$LATEST") {
        return function_qualifier(base)?
            .is_none()
            .then_some(Some("$LATEST"));
    }
    if !is_function_arn(arn) {
        return None;
    }
    let res = arn_resource(arn, "lambda")?;
    Some(res.splitn(3, ':').nth(2))
}

/// A published version's qualifier: Lambda numbers versions from 1 (`$LATEST` and aliases are
/// not numbers).
pub(super) fn is_version_number(qualifier: &str) -> bool {
    !qualifier.is_empty()
        && qualifier.len() <= 10
        && qualifier.bytes().all(|b| b.is_ascii_digit())
        && !qualifier.starts_with('0')
}

/// A Lambda function ARN qualified by a published version's number: what the gateway binding
/// invokes, on every backend.
pub(crate) fn is_numbered_version(arn: &str) -> bool {
    function_qualifier(arn).is_some_and(|q| q.is_some_and(is_version_number))
}

pub(super) fn is_queue_url(url: &str) -> bool {
    let local = ["http://127.0.0.1", "http://localhost"].iter().any(|p| {
        url.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with(':') || rest.starts_with('/'))
    });
    if local {
        return true;
    }
    let Some(rest) = url.strip_prefix("https://sqs.") else {
        return false;
    };
    let mut parts = rest.split('/');
    let host_ok = parts
        .next()
        .and_then(|h| h.split_once(".amazonaws.com"))
        .is_some_and(|(region, tail)| !region.is_empty() && (tail.is_empty() || tail == ".cn"));
    host_ok
        && parts.next().is_some_and(|a| is_digits(a, 12))
        && parts.next().is_some_and(is_name)
        && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arn_and_url_shapes() {
        assert!(is_function_arn(
            "arn:aws:lambda:us-east-1:123456789012:function:f:live"
        ));
        assert!(!is_function_arn(
            "arn:aws:lambda:us-east-1:123456789012:layer:f"
        ));
        assert!(is_queue_url(
            "https://sqs.eu-west-1.amazonaws.com/123456789012/q"
        ));
        let f = "arn:aws:lambda:us-east-1:123456789012:function:f";
        assert_eq!(function_qualifier(f), Some(None));
        assert_eq!(function_qualifier(&format!("{f}:7")), Some(Some("7")));
        assert_eq!(function_qualifier("arn:aws:lambda:x"), None);
        assert_eq!(
            function_qualifier(&format!("{f}:$LATEST")),
            Some(Some("$LATEST"))
        );
        assert_eq!(function_qualifier(&format!("{f}:1:$LATEST")), None);
        assert!(is_version_number("7") && is_version_number("123"));
        assert!(
            !is_version_number("live") && !is_version_number("0") && !is_version_number("$LATEST")
        );
        assert!(is_queue_url("http://localhost:4566/000000000000/q"));
        assert!(!is_queue_url(
            "http://sqs.eu-west-1.amazonaws.com/123456789012/q"
        ));
    }
}
