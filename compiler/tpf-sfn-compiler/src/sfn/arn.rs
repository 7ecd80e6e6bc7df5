//! ARNs for the policies and exports: partition, region and account, `*` where the config
//! leaves them open.

#[derive(Debug, Clone, PartialEq)]
pub struct ArnContext {
    pub partition: String,
    pub region: String,
    pub account_id: String,
}

impl ArnContext {
    pub fn state_machine_arn(&self, name: &str) -> String {
        format!(
            "arn:{}:states:{}:{}:stateMachine:{name}",
            self.partition, self.region, self.account_id
        )
    }

    pub fn executions_arn(&self, machine: &str) -> String {
        format!(
            "arn:{}:states:{}:{}:execution:{machine}:*",
            self.partition, self.region, self.account_id
        )
    }

    pub fn table_arn(&self, table: &str) -> String {
        format!(
            "arn:{}:dynamodb:{}:{}:table/{table}",
            self.partition, self.region, self.account_id
        )
    }
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

/// `(region, account)` of `https://sqs.<region>.amazonaws.com/<account>/<queue>`.
pub fn queue_region_and_account(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("https://sqs.")?;
    let (host, path) = rest.split_once('/')?;
    let region = host.split_once(".amazonaws.com")?.0;
    let account = path.split('/').next()?;
    (!region.is_empty() && account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()))
        .then(|| (region.to_string(), account.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_and_account_come_from_concrete_arns_and_queue_urls() {
        assert_eq!(
            region_and_account("arn:aws:lambda:eu-west-1:123456789012:function:f"),
            Some(("eu-west-1".into(), "123456789012".into()))
        );
        assert_eq!(
            region_and_account("arn:aws:lambda:eu-west-1:12:function:f"),
            None
        );
        assert_eq!(
            queue_region_and_account("https://sqs.us-east-2.amazonaws.com/123456789012/q"),
            Some(("us-east-2".into(), "123456789012".into()))
        );
        assert_eq!(
            queue_region_and_account("http://localhost:5000/123456789012/q"),
            None
        );
    }
}
