-- Issue 47: a site's uploaded logs move from the shared D1 (`kb_logs`, FTS5 `kb_logs_fts`)
-- into the site's own Durable Object (`SiteObject`, edge/src/site_object.rs), which imports
-- its site's rows from `kb_logs` on its first call and deletes them here. What a turn still
-- reads from D1 is whether the site has logs at all: kept beside the version it already
-- reads (`kb_versions`), set by every upload, and here from the rows of today.
ALTER TABLE kb_versions ADD COLUMN has_logs INTEGER NOT NULL DEFAULT 0;
INSERT INTO kb_versions (site_id, version, has_logs)
    SELECT DISTINCT site_id, 1, 1 FROM kb_logs WHERE true
    ON CONFLICT (site_id) DO UPDATE SET has_logs = 1;
