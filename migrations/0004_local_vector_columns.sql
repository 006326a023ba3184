-- The local retrieval path filters in SQL: a query reads only the vectors it can match
-- (the site's knowledge, or one conversation's memory), not every vector of the site.
-- Vectors written from now on are base64 of little-endian f32 (older rows stay JSON
-- arrays; both are read).
ALTER TABLE local_vectors ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE local_vectors ADD COLUMN conversation_id TEXT;
UPDATE local_vectors
   SET source = COALESCE(json_extract(metadata, '$.source'), ''),
       conversation_id = json_extract(metadata, '$.conversation_id');
DROP INDEX local_vectors_by_site;
CREATE INDEX local_vectors_by_source ON local_vectors(site_id, source, conversation_id);
