//! Bearer-token authentication, compared in constant time as TPF's hosted resources do. The
//! check runs in [`super::edge::guard`], in front of every request.

use axum::http::{header, HeaderMap};
use subtle::ConstantTimeEq;

/// True when the request carries exactly one `Authorization: Bearer <token>` whose token is
/// `expected`, byte for byte. The scheme is case-insensitive (RFC 9110); the separator is one
/// space, and nothing else may surround the token: a padded token is another token.
pub fn authorized(headers: &HeaderMap, expected: &str) -> bool {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return false;
    };
    let value = value.as_bytes();
    let scheme = b"bearer ";
    if value.len() <= scheme.len() || !value[..scheme.len()].eq_ignore_ascii_case(scheme) {
        return false;
    }
    let given = &value[scheme.len()..];
    // `ct_eq` on slices of different lengths is false without comparing contents; the length
    // of the expected token is not a secret worth hiding.
    bool::from(given.ct_eq(expected.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        assert!(authorized(&headers("Bearer s3cret"), "s3cret"));
        assert!(authorized(&headers("bearer s3cret"), "s3cret"));
        assert!(!authorized(&headers("Bearer s3cre"), "s3cret"));
        assert!(!authorized(&headers("Bearer s3cretX"), "s3cret"));
        assert!(!authorized(&headers("Basic s3cret"), "s3cret"));
        assert!(!authorized(&headers("Bearer"), "s3cret"));
        assert!(!authorized(&HeaderMap::new(), "s3cret"));
    }

    #[test]
    fn a_padded_token_is_another_token() {
        // The header parser trims the value's ends; what is left must still match exactly.
        assert!(!authorized(&headers("Bearer   s3cret"), "s3cret"));
        assert!(!authorized(&headers("Bearer s3cret x"), "s3cret"));
        assert!(!authorized(&headers("Bearer\ts3cret"), "s3cret"));
        let mut padded = HeaderMap::new();
        padded.insert(
            header::AUTHORIZATION,
            axum::http::HeaderValue::from_bytes(b"Bearer s3cret   ").unwrap(),
        );
        assert!(!authorized(&padded, "s3cret"));
    }

    #[test]
    fn two_authorization_headers_are_refused() {
        let mut h = headers("Bearer s3cret");
        h.append(header::AUTHORIZATION, "Bearer other".parse().unwrap());
        assert!(!authorized(&h, "s3cret"));
    }
}
