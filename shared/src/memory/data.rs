//! In-memory merchant data sets (`analyst`), scoped by site and user like the D1 ones.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::boundary::{DataConnection, DataFuture, DataRows, DataSets};
use crate::error::{ServiceError, ServiceErrorKind};

/// Connections with their rows, per site; optionally failing every read.
#[derive(Debug, Default)]
pub struct MemoryDataSets {
    sets: RefCell<Vec<(String, DataConnection, Vec<serde_json::Value>)>>,
    /// When set, every read fails (fault injection).
    pub fail: core::cell::Cell<bool>,
}

impl MemoryDataSets {
    /// Adds (or replaces, by site, user and name) a connection with its rows.
    pub fn put(&self, site_id: &str, mut connection: DataConnection, rows: Vec<serde_json::Value>) {
        connection.row_count = rows.len() as u64;
        let mut sets = self.sets.borrow_mut();
        sets.retain(|(s, c, _)| {
            !(s == site_id && c.user_id == connection.user_id && c.name == connection.name)
        });
        sets.push((site_id.into(), connection, rows));
    }

    fn check(&self) -> Result<(), ServiceError> {
        if self.fail.get() {
            Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "data sets unavailable",
            ))
        } else {
            Ok(())
        }
    }
}

impl DataSets for MemoryDataSets {
    fn connections<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
    ) -> DataFuture<'a, Vec<DataConnection>> {
        Box::pin(async move {
            self.check()?;
            let mut out: Vec<DataConnection> = self
                .sets
                .borrow()
                .iter()
                .filter(|(s, c, _)| s == site_id && c.user_id == user_id)
                .map(|(_, c, _)| c.clone())
                .collect();
            out.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(out)
        })
    }

    fn rows<'a>(
        &'a self,
        site_id: &'a str,
        user_id: &'a str,
        connection_id: &'a str,
        cap: usize,
    ) -> DataFuture<'a, DataRows> {
        Box::pin(async move {
            self.check()?;
            let sets = self.sets.borrow();
            let Some((_, _, rows)) = sets
                .iter()
                .find(|(s, c, _)| s == site_id && c.user_id == user_id && c.id == connection_id)
            else {
                return Ok(DataRows::default());
            };
            Ok(DataRows {
                rows: rows.iter().take(cap).cloned().collect(),
                over_cap: rows.len() > cap,
            })
        })
    }
}
