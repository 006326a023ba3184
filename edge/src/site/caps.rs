//! Per-site caps: how much of the shared store one site may hold (data sets, their rows and
//! bytes, knowledge documents and their text, warranty records), so no merchant can fill
//! what the others need. A deployment sets them with the `SITE_CAPS` var (JSON, any subset
//! of the fields; the defaults hold for the rest). Writes that would pass a cap are refused
//! whole with `409 limit_reached` and a sentence that says which cap and what to do; the
//! console shows the site's usage beside its caps (`GET /admin/usage`).

use concierge_core::flows::analyst::format::group;
use serde::{Deserialize, Serialize};
use worker::Env;

use crate::error::ApiError;

/// The caps of every site of this deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct Caps {
    /// Analyst data sets (connections) a site holds.
    pub(crate) data_sets: u64,
    /// Rows across all of a site's data sets.
    pub(crate) data_rows: u64,
    /// Bytes of row JSON across all of a site's data sets.
    pub(crate) data_bytes: u64,
    /// Knowledge documents a site holds.
    pub(crate) documents: u64,
    /// Bytes of text across all of a site's knowledge documents.
    pub(crate) document_bytes: u64,
    /// Warranty records a shop site holds.
    pub(crate) warranty_records: u64,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            data_sets: 20,
            data_rows: 1_000_000,
            data_bytes: 256 * 1024 * 1024,
            documents: 1_000,
            document_bytes: 64 * 1024 * 1024,
            warranty_records: 100_000,
        }
    }
}

impl Caps {
    /// The deployment's caps: `SITE_CAPS` over the defaults. A var that is not valid JSON
    /// of these fields is logged and the defaults hold (a typo must not lift every cap).
    pub(crate) fn of(env: &Env) -> Self {
        let Ok(var) = env.var("SITE_CAPS") else {
            return Self::default();
        };
        let text = var.to_string();
        if text.trim().is_empty() {
            return Self::default();
        }
        serde_json::from_str(&text).unwrap_or_else(|e| {
            worker::console_error!("SITE_CAPS is not valid ({e}); the default caps hold");
            Self::default()
        })
    }

    /// A data-set upload refused: it would pass one of the data caps.
    pub(crate) fn data_full(&self) -> ApiError {
        ApiError::LimitReached(format!(
            "Trang này đã đạt giới hạn dữ liệu: tối đa {} bộ dữ liệu, {} dòng và {} dữ liệu; \
             chưa có gì được ghi. Hãy xóa bớt bộ dữ liệu rồi tải lên lại. (This site is at its \
             data cap: at most {} data sets, {} rows and {} of data; nothing was written. \
             Delete data sets, then upload again.)",
            vi(self.data_sets),
            vi(self.data_rows),
            size(self.data_bytes, '.'),
            en(self.data_sets),
            en(self.data_rows),
            size(self.data_bytes, ','),
        ))
    }

    /// A document refused: it would pass the documents cap.
    pub(crate) fn documents_full(&self) -> ApiError {
        ApiError::LimitReached(format!(
            "Trang này đã đạt giới hạn tài liệu: tối đa {} tài liệu và {} văn bản; chưa có gì \
             được ghi. Hãy xóa bớt tài liệu rồi thêm lại. (This site is at its documents cap: \
             at most {} documents and {} of text; nothing was written. Delete documents, then \
             add again.)",
            vi(self.documents),
            size(self.document_bytes, '.'),
            en(self.documents),
            size(self.document_bytes, ','),
        ))
    }

    /// A warranty upload refused: it would pass the warranty records cap.
    pub(crate) fn warranty_full(&self) -> ApiError {
        ApiError::LimitReached(format!(
            "Trang này đã đạt giới hạn {} hồ sơ bảo hành; chưa có gì được ghi. (This site is \
             at its cap of {} warranty records; nothing was written.)",
            vi(self.warranty_records),
            en(self.warranty_records),
        ))
    }
}

/// `1234567` with `sep` between groups of three digits.
fn grouped(n: u64, sep: char) -> String {
    group(&n.to_string(), sep)
}

/// Vietnamese grouping: `1.000.000`.
fn vi(n: u64) -> String {
    grouped(n, '.')
}

/// English grouping: `1,000,000`.
fn en(n: u64) -> String {
    grouped(n, ',')
}

/// A byte count as the merchant reads it: whole MB from 1 MB up, else bytes (`.` groups
/// the Vietnamese way, `,` the English way).
fn size(bytes: u64, sep: char) -> String {
    const MB: u64 = 1024 * 1024;
    if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{} MB", grouped(bytes / MB, sep))
    } else {
        let unit = if sep == '.' { "byte" } else { "bytes" };
        format!("{} {unit}", grouped(bytes, sep))
    }
}
