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
