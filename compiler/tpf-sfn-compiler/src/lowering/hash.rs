//! The hash a release's outputs are known by: the definition or spec text a deployed resource
//! runs, as lowercase hex sha256. `deploy` compares it with the deployed resource's tag to refuse
//! a changed definition under a pinned release.

/// The same digest as the contract hash's, over the text's UTF-8 bytes.
pub fn sha256_hex(text: &str) -> String {
    crate::contract::hash::sha256_hex(text.as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_the_sha256_of_the_text() {
        // The sha256 of "abc" (FIPS 180-2, appendix B.1).
        assert_eq!(
            super::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
