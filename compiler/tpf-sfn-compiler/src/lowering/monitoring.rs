//! What every backend's release and wake-path stacks declare to be watched: CloudWatch alarms
//! (one shape, spelled by each flavour here) and how long CloudWatch Logs keeps the functions'
//! and machines' logs. Each backend chooses its alarms' metrics; the spelling is shared, so a
//! change to how an alarm notifies reaches every stack at once.

use serde_json::{json, Value};

/// Days CloudWatch Logs keeps a stack's logs unless the stack's parameter says otherwise.
pub const DEFAULT_LOG_RETENTION_DAYS: u64 = 30;
/// CloudWatch Logs' accepted retention values.
pub const LOG_RETENTION_DAYS: &[u64] = &[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
];
const RETENTION_DESCRIPTION: &str = "Days CloudWatch Logs keeps the functions' and machines' logs";

/// One CloudWatch alarm: `metric` of `namespace` for the resource `dimension` names (`target`,
/// a backend's own resource reference), `statistic` over `period` seconds, alarming at
/// `threshold` or more in `periods` periods.
pub struct Alarm<T> {
    /// Logical id (CloudFormation) and, in snake case, resource name (Terraform).
    pub id: &'static str,
    pub tf_name: &'static str,
    pub description: &'static str,
    pub namespace: &'static str,
    pub metric: &'static str,
    pub dimension: &'static str,
    pub target: T,
    pub statistic: &'static str,
    pub period: u64,
    pub periods: u64,
    pub threshold: u64,
}

/// The CloudFormation spelling.
pub mod cloudformation {
    use super::*;

    /// The parameter naming the SNS topic the alarms notify, and its condition.
    pub const TOPIC_PARAMETER: &str = "AlarmTopicArn";
    pub const TOPIC_CONDITION: &str = "HasAlarmTopic";
    /// The parameter of the logs' retention.
    pub const RETENTION_PARAMETER: &str = "LogRetentionInDays";

    /// A stack's monitoring parameters (the logs' retention, the alarms' topic) and the
    /// topic's condition, as every stack with alarms declares them.
    pub fn declare(
        parameters: &mut serde_json::Map<String, Value>,
        conditions: &mut serde_json::Map<String, Value>,
    ) {
        parameters.insert(RETENTION_PARAMETER.into(), retention_parameter());
        parameters.insert(TOPIC_PARAMETER.into(), topic_parameter());
        conditions.insert(TOPIC_CONDITION.into(), topic_condition());
    }

    pub fn topic_parameter() -> Value {
        json!({
            "Type": "String",
            "Default": "",
            "AllowedPattern": "^$|^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:.+$",
            "Description": "SNS topic the alarms notify; empty for none"
        })
    }

    pub fn topic_condition() -> Value {
        json!({"Fn::Not": [{"Fn::Equals": [{"Ref": TOPIC_PARAMETER}, ""]}]})
    }

    pub fn retention_parameter() -> Value {
        json!({
            "Type": "Number",
            "Default": DEFAULT_LOG_RETENTION_DAYS,
            "AllowedValues": LOG_RETENTION_DAYS,
            "Description": RETENTION_DESCRIPTION
        })
    }

    /// An `AWS::Logs::LogGroup` named `name`, kept for the retention parameter's days.
    pub fn log_group(name: Value) -> Value {
        json!({
            "Type": "AWS::Logs::LogGroup",
            "Properties": {"LogGroupName": name, "RetentionInDays": {"Ref": RETENTION_PARAMETER}}
        })
    }

    /// The alarm on `target` (the dimension's value as the template spells it).
    pub fn alarm<T>(a: &Alarm<T>, target: Value) -> Value {
        json!({
            "Type": "AWS::CloudWatch::Alarm",
            "Properties": {
                "AlarmDescription": a.description,
                "Namespace": a.namespace,
                "MetricName": a.metric,
                "Dimensions": [{"Name": a.dimension, "Value": target}],
                "Statistic": a.statistic,
                "Period": a.period,
                "EvaluationPeriods": a.periods,
                "Threshold": a.threshold,
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "TreatMissingData": "notBreaching",
                "AlarmActions": {"Fn::If": [TOPIC_CONDITION, [{"Ref": TOPIC_PARAMETER}], {"Ref": "AWS::NoValue"}]}
            }
        })
    }
}

/// The Terraform (JSON) spelling.
pub mod terraform {
    use super::*;

    /// The variable naming the SNS topic the module's alarms notify.
    pub fn topic_variable() -> Value {
        json!({"type": "string", "default": "", "description": "SNS topic the alarms notify; empty for none"})
    }

    /// The variable of the logs' retention.
    pub fn retention_variable() -> Value {
        json!({"type": "number", "default": DEFAULT_LOG_RETENTION_DAYS, "description": RETENTION_DESCRIPTION})
    }

    /// An `aws_cloudwatch_log_group` named `name` (already a Terraform string).
    pub fn log_group(name: &str) -> Value {
        json!({"name": name, "retention_in_days": "${var.log_retention_in_days}"})
    }

    /// The alarm on `target`, a Terraform reference (`aws_lambda_function.driver.function_name`),
    /// named after it.
    pub fn alarm<T>(a: &Alarm<T>, target: &str) -> Value {
        json!({
            "alarm_name": format!("${{{target}}}-{}", a.tf_name.replace('_', "-")),
            "alarm_description": a.description,
            "namespace": a.namespace,
            "metric_name": a.metric,
            "dimensions": {a.dimension: format!("${{{target}}}")},
            "statistic": a.statistic,
            "period": a.period,
            "evaluation_periods": a.periods,
            "threshold": a.threshold,
            "comparison_operator": "GreaterThanOrEqualToThreshold",
            "treat_missing_data": "notBreaching",
            "alarm_actions": "${var.alarm_topic_arn == \"\" ? [] : [var.alarm_topic_arn]}"
        })
    }
}
