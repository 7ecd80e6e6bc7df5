//! TPF's rows as the project's [`Item`] ↔ the DynamoDB SDK's attribute maps: one conversion for
//! the DynamoDB store, the wake path and the gateway's binding table.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use tpf_wire::records::{AttrValue, Item};

pub type SdkItem = HashMap<String, AttributeValue>;

pub fn to_sdk_value(value: &AttrValue) -> AttributeValue {
    match value {
        AttrValue::S(s) => AttributeValue::S(s.clone()),
        AttrValue::N(n) => AttributeValue::N(n.clone()),
        AttrValue::Bool(b) => AttributeValue::Bool(*b),
        AttrValue::Ss(set) => AttributeValue::Ss(set.iter().cloned().collect()),
        AttrValue::Null => AttributeValue::Null(true),
    }
}

pub fn to_sdk(item: &Item) -> SdkItem {
    item.iter()
        .map(|(k, v)| (k.clone(), to_sdk_value(v)))
        .collect()
}

/// Attribute types the records never use (maps, lists, binary) are dropped: no record reads them.
pub fn from_sdk(item: &SdkItem) -> Item {
    item.iter()
        .filter_map(|(k, v)| {
            let value = match v {
                AttributeValue::S(s) => AttrValue::S(s.clone()),
                AttributeValue::N(n) => AttrValue::N(n.clone()),
                AttributeValue::Bool(b) => AttrValue::Bool(*b),
                AttributeValue::Ss(set) => AttrValue::Ss(set.iter().cloned().collect()),
                AttributeValue::Null(_) => AttrValue::Null,
                _ => return None,
            };
            Some((k.clone(), value))
        })
        .collect()
}

/// A DynamoDB Streams image as TPF's rows are read, by the same rule as [`from_sdk`] (the
/// Streams SDK has its own attribute type).
pub fn from_stream_image(
    image: &HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>,
) -> Item {
    use aws_sdk_dynamodbstreams::types::AttributeValue as V;
    image
        .iter()
        .filter_map(|(k, v)| {
            let value = match v {
                V::S(s) => AttrValue::S(s.clone()),
                V::N(n) => AttrValue::N(n.clone()),
                V::Bool(b) => AttrValue::Bool(*b),
                V::Ss(set) => AttrValue::Ss(set.iter().cloned().collect()),
                V::Null(_) => AttrValue::Null,
                _ => return None,
            };
            Some((k.clone(), value))
        })
        .collect()
}
