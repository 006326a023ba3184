-- Per-site caps (README "Per-site caps"): the bytes a site's data sets and knowledge
-- documents hold, kept beside each row so a write's guard sums one small column over the
-- site's index range instead of reading every row's text. Existing rows are measured once.
ALTER TABLE data_connections ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE data_connections SET bytes = (
    SELECT coalesce(sum(length(CAST(r.data AS BLOB))), 0) FROM data_rows r
    WHERE r.site_id = data_connections.site_id AND r.connection_id = data_connections.id
);
ALTER TABLE knowledge_documents ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE knowledge_documents SET bytes = length(CAST(content AS BLOB));
