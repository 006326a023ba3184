-- The local retrieval path: under `wrangler dev` Vectorize cannot run, so vectors are
-- kept here (values as a JSON array) and queried by brute-force cosine per site. In
-- production the Vectorize binding holds them and this table stays empty.
CREATE TABLE local_vectors (
    id        TEXT PRIMARY KEY,
    site_id   TEXT NOT NULL,
    metadata  TEXT NOT NULL,
    vector    TEXT NOT NULL
);
CREATE INDEX local_vectors_by_site ON local_vectors(site_id);

-- How many vector chunks each message and document has, so deleting one deletes exactly
-- its vectors (`{id}#chunk_0` … `{id}#chunk_{n-1}`), in Vectorize as locally.
ALTER TABLE messages ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE knowledge_documents ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE knowledge_documents ADD COLUMN index_status TEXT NOT NULL DEFAULT 'pending';
