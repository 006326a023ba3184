//! The `analyst` template's merchant data sets ("connections", TEMPLATES.md §1.3): each
//! belongs to one user identity of one site; rows are JSON objects typed at upload.
//!
//! Object-safe (boxed futures), so a [`Platform`](crate::engine::Platform) offers it with a
//! default method and platforms without data sets need not change. Every read is scoped
//! by site *and* user: isolation is the loader's job, never the pipeline's.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::future::Future;
use core::pin::Pin;
use serde::{Deserialize, Serialize};

use crate::error::ServiceError;

/// A future borrowed from the store (single-threaded: no `Send`).
pub type DataFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ServiceError>> + 'a>>;

/// What `aggregate_data` asks, when the SQL path can answer it exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateQuery {
    /// `sum`, `count`, `avg`, `min` or `max`.
    pub operation: String,
    /// The aggregated field (none: count rows).
    pub field: Option<String>,
    /// The grouping field.
    pub group_by: Option<String>,
    /// Equality filters (field, string or number).
    pub equals: Vec<(String, serde_json::Value)>,
    /// An inclusive date range (field, from, to-end-of-day) over ISO strings.
    pub range: Option<(String, String, String)>,
    /// Whether `field` was typed `number` at upload (every value a number or null), so no
    /// per-row type check is needed.
    pub field_numeric: bool,
    /// Whether `group_by` was typed `string`, `number` or `date` at upload (no booleans),
    /// so its JSON type need not be read.
    pub group_scalar: bool,
}

/// One result row: the group (null without `group_by`), the value, the rows counted.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateRow {
    /// The group's key.
    pub group: serde_json::Value,
    /// The aggregate.
    pub value: serde_json::Value,
    /// Rows in the group.
    pub row_count: u64,
}

/// One inferred column of a data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataField {
    /// The column name (the header).
    pub name: String,
    /// `string`, `number`, `date` or `bool`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Up to three example values.
    #[serde(default)]
    pub examples: Vec<serde_json::Value>,
}

/// One data set of a user, without its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataConnection {
    /// Its id.
    pub id: String,
    /// The user it belongs to.
    pub user_id: String,
    /// Its name (unique per site and user).
    pub name: String,
    /// What it holds, in the merchant's words.
    #[serde(default)]
    pub description: String,
    /// How many rows it has.
    pub row_count: u64,
    /// Its inferred columns.
    pub fields: Vec<DataField>,
}

/// Rows loaded for one connection, bounded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataRows {
    /// The rows, in upload order (at most the cap asked for).
    pub rows: Vec<serde_json::Value>,
    /// Whether the connection has more rows than the cap.
    pub over_cap: bool,
}

/// The merchant data sets of sites, always read by site and user.
pub trait DataSets {
    /// The connections of `user_id` on `site_id`, by name.
    fn connections<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
    ) -> DataFuture<'a, Vec<DataConnection>>;

    /// At most `cap` rows of connection `connection_id` of `user_id` on `site_id` (none
    /// when the connection is not the user's).
    fn rows<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        cap: usize,
    ) -> DataFuture<'a, DataRows>;

    /// Runs `query` in the store (the SQL path of `aggregate_data`) over connection
    /// `connection_id` of `user_id` on `site_id`. `Ok(None)`: this store cannot, the
    /// caller evaluates over loaded rows instead (the default).
    fn aggregate<'a>(
        &'a self,
        _site_id: &'a str,
        _user_id: &'a str,
        _connection_id: &'a str,
        _query: &'a AggregateQuery,
    ) -> DataFuture<'a, Option<Vec<AggregateRow>>> {
        Box::pin(async { Ok(None) })
    }
}

impl<T: DataSets + ?Sized> DataSets for &T {
    fn connections<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
    ) -> DataFuture<'a, Vec<DataConnection>> {
        (**self).connections(site_id, user_id)
    }
    fn rows<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        cap: usize,
    ) -> DataFuture<'a, DataRows> {
        (**self).rows(site_id, user_id, connection_id, cap)
    }
    fn aggregate<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        query: &'a AggregateQuery,
    ) -> DataFuture<'a, Option<Vec<AggregateRow>>> {
        (**self).aggregate(site_id, user_id, connection_id, query)
    }
}
