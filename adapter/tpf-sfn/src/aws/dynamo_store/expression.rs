//! Expression placeholders: attribute names are written `#name` and mapped to `name`
//! automatically (TPF's attributes include reserved words such as `status`); only the values an
//! expression mentions are sent, since DynamoDB rejects unused ones.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

/// A conditional write: the expressions plus their placeholders' values.
pub(super) struct Write {
    pub update: String,
    pub condition: String,
    pub values: Vec<(&'static str, AttributeValue)>,
}

fn placeholders(expressions: &[&str], sigil: char) -> Vec<String> {
    let mut found = Vec::new();
    for expression in expressions {
        let mut chars = expression.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c != sigil {
                continue;
            }
            let mut end = i + 1;
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let token = &expression[i..end];
            if token.len() > 1 && !found.iter().any(|f| f == token) {
                found.push(token.to_owned());
            }
        }
    }
    found
}

pub(super) fn names_for(expressions: &[&str]) -> HashMap<String, String> {
    placeholders(expressions, '#')
        .into_iter()
        .map(|token| {
            let name = token[1..].to_owned();
            (token, name)
        })
        .collect()
}

pub(super) fn values_for(
    expressions: &[&str],
    values: Vec<(&'static str, AttributeValue)>,
) -> Option<HashMap<String, AttributeValue>> {
    let used = placeholders(expressions, ':');
    let map: HashMap<String, AttributeValue> = values
        .into_iter()
        .filter(|(name, _)| used.iter().any(|u| u == name))
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    (!map.is_empty()).then_some(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::dynamo_item::n;

    #[test]
    fn placeholders_are_whole_tokens() {
        let found = placeholders(&["#a = :now AND #b <= :now_s", "SET #a = :now"], ':');
        assert_eq!(found, vec![":now", ":now_s"]);
        let names = names_for(&["#status IN (:x) AND attribute_exists(#tenant_id)"]);
        assert_eq!(names.get("#status").map(String::as_str), Some("status"));
        assert_eq!(names.len(), 2);
        assert!(values_for(&["#a = :b"], vec![(":c", n(1))]).is_none());
    }
}
