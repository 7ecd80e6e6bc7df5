//! The DynamoDB item mapping every record shares: TPF's subset of `AttributeValue`, and the
//! writer and reader that spell TPF's attribute rules once.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// The subset of DynamoDB `AttributeValue` TPF's tables use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    S(String),
    /// Numbers travel as decimal strings, as in DynamoDB.
    N(String),
    Bool(bool),
    Ss(BTreeSet<String>),
    Null,
}

pub type Item = BTreeMap<String, AttrValue>;

/// An item that does not decode into a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemError {
    pub attribute: String,
    pub problem: &'static str,
}

impl fmt::Display for ItemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attribute `{}`: {}", self.attribute, self.problem)
    }
}

impl std::error::Error for ItemError {}

/// A record with a DynamoDB row shape. Absent optional fields are absent attributes (TPF writes
/// `REMOVE`, not NULL), so conditions like `attribute_not_exists(lease_owner)` keep working.
pub trait DynamoItem: Sized {
    const TABLE: &'static str;
    fn attribute_names() -> &'static [&'static str];
    fn to_item(&self) -> Item;
    fn from_item(item: &Item) -> Result<Self, ItemError>;
}

#[derive(Default)]
pub(super) struct Writer(pub(super) Item);

impl Writer {
    pub(super) fn s(&mut self, name: &str, value: &str) -> &mut Self {
        self.0
            .insert(name.to_owned(), AttrValue::S(value.to_owned()));
        self
    }
    pub(super) fn opt_s(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        if let Some(value) = value {
            self.s(name, value);
        }
        self
    }
    pub(super) fn n(&mut self, name: &str, value: i64) -> &mut Self {
        self.0
            .insert(name.to_owned(), AttrValue::N(value.to_string()));
        self
    }
    pub(super) fn opt_n(&mut self, name: &str, value: Option<i64>) -> &mut Self {
        if let Some(value) = value {
            self.n(name, value);
        }
        self
    }
    pub(super) fn b(&mut self, name: &str, value: bool) -> &mut Self {
        self.0.insert(name.to_owned(), AttrValue::Bool(value));
        self
    }
    pub(super) fn ss(&mut self, name: &str, value: &BTreeSet<String>) -> &mut Self {
        // DynamoDB rejects empty sets; TPF's `ADD` creates the set on first use.
        if !value.is_empty() {
            self.0.insert(name.to_owned(), AttrValue::Ss(value.clone()));
        }
        self
    }
    pub(super) fn json(&mut self, name: &str, value: &Value) -> &mut Self {
        self.s(name, &value.to_string())
    }
    pub(super) fn opt_json(&mut self, name: &str, value: Option<&Value>) -> &mut Self {
        if let Some(value) = value {
            self.json(name, value);
        }
        self
    }
    pub(super) fn done(&mut self) -> Item {
        std::mem::take(&mut self.0)
    }
}

/// [`ItemError::problem`] of a release-registry attribute TPF's reader requires.
pub const MISSING_STRING: &str = "missing string attribute";
pub const MISSING_NUMBER: &str = "missing numeric attribute";

pub(super) struct Reader<'a>(pub(super) &'a Item);

impl Reader<'_> {
    pub(super) fn err(name: &str, problem: &'static str) -> ItemError {
        ItemError {
            attribute: name.to_owned(),
            problem,
        }
    }
    pub(super) fn opt_s(&self, name: &str) -> Result<Option<String>, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(None),
            Some(AttrValue::S(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Self::err(name, "expected S")),
        }
    }
    pub(super) fn s(&self, name: &str) -> Result<String, ItemError> {
        self.opt_s(name)?
            .ok_or_else(|| Self::err(name, "missing required attribute"))
    }
    pub(super) fn opt_n(&self, name: &str) -> Result<Option<i64>, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(None),
            Some(AttrValue::N(n)) => n
                .parse()
                .map(Some)
                .map_err(|_| Self::err(name, "not an integer")),
            Some(_) => Err(Self::err(name, "expected N")),
        }
    }
    pub(super) fn n(&self, name: &str) -> Result<i64, ItemError> {
        self.opt_n(name)?
            .ok_or_else(|| Self::err(name, "missing required attribute"))
    }
    pub(super) fn n_or(&self, name: &str, default: i64) -> Result<i64, ItemError> {
        Ok(self.opt_n(name)?.unwrap_or(default))
    }
    pub(super) fn u32(&self, name: &str) -> Result<u32, ItemError> {
        u32::try_from(self.n(name)?).map_err(|_| Self::err(name, "out of range"))
    }
    pub(super) fn opt_u32(&self, name: &str) -> Result<Option<u32>, ItemError> {
        self.opt_n(name)?
            .map(|n| u32::try_from(n).map_err(|_| Self::err(name, "out of range")))
            .transpose()
    }
    pub(super) fn b(&self, name: &str) -> Result<bool, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(false),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(Self::err(name, "expected BOOL")),
        }
    }
    pub(super) fn ss(&self, name: &str) -> Result<BTreeSet<String>, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(BTreeSet::new()),
            Some(AttrValue::Ss(set)) => Ok(set.clone()),
            Some(_) => Err(Self::err(name, "expected SS")),
        }
    }
    pub(super) fn opt_json(&self, name: &str) -> Result<Option<Value>, ItemError> {
        self.opt_s(name)?
            .map(|text| serde_json::from_str(&text).map_err(|_| Self::err(name, "invalid JSON")))
            .transpose()
    }
    pub(super) fn json(&self, name: &str) -> Result<Value, ItemError> {
        Ok(self.opt_json(name)?.unwrap_or(Value::Null))
    }
    /// `DynamoPipelineReleaseRegistry.stringValue`: present and of type S.
    pub(super) fn tpf_s(&self, name: &str) -> Result<String, ItemError> {
        match self.0.get(name) {
            Some(AttrValue::S(s)) => Ok(s.clone()),
            _ => Err(Self::err(name, MISSING_STRING)),
        }
    }
    /// `longValue`: present, of type N, a Java long.
    pub(super) fn tpf_n(&self, name: &str) -> Result<i64, ItemError> {
        match self.0.get(name) {
            Some(AttrValue::N(n)) => n.parse().map_err(|_| Self::err(name, "not an integer")),
            _ => Err(Self::err(name, MISSING_NUMBER)),
        }
    }
    /// `artifactUriValue`: a non-blank `primary_artifact_uri`, else the legacy
    /// `primary_artifact_path`, else the row is unreadable.
    pub(super) fn artifact_uri(&self) -> Result<String, ItemError> {
        ["primary_artifact_uri", "primary_artifact_path"]
            .iter()
            .find_map(|name| match self.0.get(*name) {
                Some(AttrValue::S(s)) if !s.trim().is_empty() => Some(s.clone()),
                _ => None,
            })
            .ok_or_else(|| Self::err("primary_artifact_uri", MISSING_STRING))
    }
    pub(super) fn parsed<T>(
        &self,
        name: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<T, ItemError> {
        parse(&self.s(name)?).ok_or_else(|| Self::err(name, "unknown enum value"))
    }
}
