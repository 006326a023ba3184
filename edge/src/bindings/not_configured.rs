//! The boundary the Worker does not provide yet: read-only SQL over a site's own data. No
//! built template uses it (`analyst` and `rental` bring the D1 reader with them); until
//! then a call fails as an unavailable service, so a template that reached it would
//! degrade or fail visibly, never silently. (Web search: [`super::web_search`].)

use concierge_core::boundary::{ReadOnlyQuery, SqlReader, SqlRows, SqlScope, TableSchema};
use concierge_core::error::{ServiceError, ServiceErrorKind};

/// A boundary this deployment does not provide.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NotConfigured;

fn unavailable(what: &str) -> ServiceError {
    ServiceError::new(
        ServiceErrorKind::Unavailable,
        format!("{what} is not available on this Worker"),
    )
}

impl SqlReader for NotConfigured {
    async fn query(
        &self,
        _scope: SqlScope<'_>,
        _query: &ReadOnlyQuery,
        _max_rows: usize,
    ) -> Result<SqlRows, ServiceError> {
        Err(unavailable("read-only SQL"))
    }

    async fn schema(&self, _scope: SqlScope<'_>) -> Result<Vec<TableSchema>, ServiceError> {
        Err(unavailable("read-only SQL"))
    }
}
