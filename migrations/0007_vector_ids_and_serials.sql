-- Issue 10 (data hardening).
--
-- 1. Knowledge vector ids: a document's chunks were `{site_id}/{document_id}#chunk_{i}`,
--    which passes Vectorize's 64-byte limit for long document ids. They are now
--    `doc_{hash}#chunk_{i}` (see concierge_core::retrieval). The vectors already written
--    under the old ids are recorded here and deleted with the document, or when it is next
--    indexed; until then they keep answering. Run `POST /admin/index` on each site to move
--    every document to the new ids (documents whose ids were too long for Vectorize are
--    indexed for the first time).
ALTER TABLE knowledge_documents ADD COLUMN legacy_chunk_count INTEGER NOT NULL DEFAULT 0;
UPDATE knowledge_documents SET legacy_chunk_count = chunk_count;

-- 2. Warranty serials are unique per site whatever their letter case (lookups already
--    ignored case, and answered from whichever duplicate came first). Of serials that
--    differ only in case, the row inserted last is kept (rowid order: the best record of
--    upload order there is). Dates are rewritten to the strict form the API now
--    requires: a `+` the old check let through becomes `0` (`2026-+2-01` → `2026-02-01`),
--    and a day past the month's end becomes its last day (`2026-02-31` → `2026-02-28`).
CREATE TABLE warranty_records_0007 (
    site_id         TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    serial          TEXT NOT NULL COLLATE NOCASE,
    product         TEXT NOT NULL,
    -- ISO date (YYYY-MM-DD) the warranty runs until; a day that exists.
    warranty_until  TEXT NOT NULL,
    PRIMARY KEY (site_id, serial)
);
INSERT INTO warranty_records_0007 (site_id, serial, product, warranty_until)
SELECT site_id, serial, product,
       substr(warranty_until, 1, 5) || replace(substr(warranty_until, 6, 2), '+', '0')
           || '-' || replace(substr(warranty_until, 9, 2), '+', '0')
  FROM warranty_records AS w
 WHERE w.rowid = (SELECT MAX(x.rowid) FROM warranty_records AS x
                   WHERE x.site_id = w.site_id AND upper(x.serial) = upper(w.serial));
UPDATE warranty_records_0007
   SET warranty_until = date(substr(warranty_until, 1, 8) || '01', '+1 month', '-1 day')
 WHERE CAST(substr(warranty_until, 9, 2) AS INTEGER)
       > CAST(strftime('%d', date(substr(warranty_until, 1, 8) || '01', '+1 month', '-1 day')) AS INTEGER);
DROP TABLE warranty_records;
ALTER TABLE warranty_records_0007 RENAME TO warranty_records;
