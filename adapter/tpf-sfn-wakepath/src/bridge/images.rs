//! DynamoDB stream images → the bridge's [`BridgeEvent`] inputs. Only the attributes the
//! decision reads are taken; TPF's attribute names are the contract.

use std::collections::HashMap;
use tpf_wire::records::attr as tpf_attr;

use aws_sdk_dynamodbstreams::types::AttributeValue;
use tpf_sfn_wakeup::bridge::{RecordImage, TokenRow};
use tpf_wire::wakeup::{self, attr};

pub type Image = HashMap<String, AttributeValue>;

fn text(image: &Image, name: &str) -> Option<String> {
    match image.get(name) {
        Some(AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    }
}

fn number(image: &Image, name: &str) -> Option<i64> {
    match image.get(name) {
        Some(AttributeValue::N(n)) => n.parse().ok(),
        _ => None,
    }
}

/// A `tpf_execution` image; `None` when a required attribute is missing.
pub fn record_image(image: &Image) -> Option<RecordImage> {
    Some(RecordImage {
        tenant_id: text(image, tpf_attr::TENANT_ID)?,
        execution_id: text(image, tpf_attr::EXECUTION_ID)?,
        pipeline_id: text(image, tpf_attr::PIPELINE_ID)?,
        release_version: text(image, tpf_attr::RELEASE_VERSION)?,
        status: text(image, "status")?,
        version: number(image, "version")?,
        await_unit_id: text(image, tpf_attr::AWAIT_UNIT_ID),
        last_transition_key: text(image, tpf_attr::LAST_TRANSITION_KEY),
    })
}

/// A wakeup-table image that is a driver's token row ([`wakeup::WAKEUP_ROW`]).
pub fn token_row(image: &Image) -> Option<TokenRow> {
    if text(image, wakeup::SK).as_deref() != Some(wakeup::WAKEUP_ROW) {
        return None;
    }
    let pk = text(image, wakeup::PK)?;
    let (tenant_id, execution_id) = wakeup::split_pk(&pk)?;
    Some(TokenRow {
        tenant_id: tenant_id.to_owned(),
        execution_id: execution_id.to_owned(),
        task_token: text(image, attr::TASK_TOKEN)?,
        unit_id: text(image, tpf_attr::UNIT_ID)?,
        execution_arn: text(image, attr::EXECUTION_ARN).unwrap_or_default(),
    })
}

/// The bridge's own checkpoint rows: their stream records carry nothing to decide.
pub fn is_checkpoint(image: &Image) -> bool {
    text(image, wakeup::PK).as_deref() == Some(wakeup::CHECKPOINT_PK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.into())
    }

    #[test]
    fn execution_and_token_images_decode_with_tpf_names() {
        let image: Image = [
            ("tenant_id", s("t")),
            ("execution_id", s("e")),
            ("pipeline_id", s("p")),
            ("release_version", s("r")),
            ("status", s("WAITING_EXTERNAL")),
            ("version", AttributeValue::N("2".into())),
            ("await_unit_id", s("u")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let r = record_image(&image).unwrap();
        assert_eq!((r.status.as_str(), r.version), ("WAITING_EXTERNAL", 2));
        assert_eq!(r.await_unit_id.as_deref(), Some("u"));
        let mut partial = image.clone();
        partial.remove("version");
        assert!(record_image(&partial).is_none());

        let token: Image = [
            ("pk", s("t#e#1")),
            ("sk", s("wakeup")),
            ("task_token", s("tok")),
            ("unit_id", s("u")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let row = token_row(&token).unwrap();
        assert_eq!(
            (row.tenant_id.as_str(), row.execution_id.as_str()),
            ("t", "e#1")
        );
        let mut driver = token.clone();
        driver.insert("sk".into(), s("driver"));
        assert!(token_row(&driver).is_none());
    }
}
