//! ARNs for the policies and exports: partition, region and account, `*` where the config
//! leaves them open.

#[derive(Debug, Clone, PartialEq)]
pub struct ArnContext {
    pub partition: String,
    pub region: String,
    pub account_id: String,
}

/// `(region, account)` of `arn:<p>:<service>:<region>:<account>:…`, when both are concrete.
pub fn region_and_account(arn: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    match parts.as_slice() {
        ["arn", _, _, region, account, _]
            if !region.is_empty()
                && account.len() == 12
                && account.bytes().all(|b| b.is_ascii_digit()) =>
        {
            Some((region.to_string(), account.to_string()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_and_account_come_from_concrete_arns() {
        assert_eq!(
            region_and_account("arn:aws:lambda:eu-west-1:123456789012:function:f"),
            Some(("eu-west-1".into(), "123456789012".into()))
        );
        assert_eq!(
            region_and_account("arn:aws:lambda:eu-west-1:12:function:f"),
            None
        );
    }
}
