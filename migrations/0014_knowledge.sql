-- Issue 15 (`knowledge`, seed 003): permission scopes and provenance on documents, the
-- local vector path's filter columns, uploaded logs with full-text search, and a per-site
-- knowledge-base version for the answer cache.

-- 1. Documents carry a scope, a department, a URL and a source date (TEMPLATES.md §3.3).
ALTER TABLE knowledge_documents ADD COLUMN scope TEXT NOT NULL DEFAULT 'public'
    CHECK (scope IN ('public', 'internal', 'private'));
ALTER TABLE knowledge_documents ADD COLUMN department TEXT NOT NULL DEFAULT 'general';
ALTER TABLE knowledge_documents ADD COLUMN url TEXT;
ALTER TABLE knowledge_documents ADD COLUMN source_created_at TEXT;
ALTER TABLE knowledge_documents ADD COLUMN source_type TEXT NOT NULL DEFAULT 'rag';

-- 2. The local retrieval path filters by scope and department in SQL, as Vectorize does
--    with metadata indexes. Existing rows were written without a scope: they get none
--    (NULL), so a knowledge query never reads them until their document is re-indexed.
ALTER TABLE local_vectors ADD COLUMN scope TEXT;
ALTER TABLE local_vectors ADD COLUMN department TEXT;
UPDATE local_vectors
   SET scope = json_extract(metadata, '$.scope'),
       department = json_extract(metadata, '$.department');

-- 3. Logs the merchant uploads (`PUT /admin/logs`, JSON lines) for `log_tool`, with an
--    FTS5 index kept in step by triggers.
CREATE TABLE kb_logs (
    site_id TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    id      TEXT NOT NULL,
    ts      TEXT NOT NULL,
    level   TEXT NOT NULL DEFAULT 'INFO',
    source  TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL,
    PRIMARY KEY (site_id, id)
);
CREATE INDEX kb_logs_by_time ON kb_logs(site_id, ts);
CREATE VIRTUAL TABLE kb_logs_fts USING fts5(
    message, source, level,
    content = 'kb_logs', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER kb_logs_ai AFTER INSERT ON kb_logs BEGIN
    INSERT INTO kb_logs_fts(rowid, message, source, level)
    VALUES (new.rowid, new.message, new.source, new.level);
END;
CREATE TRIGGER kb_logs_ad AFTER DELETE ON kb_logs BEGIN
    INSERT INTO kb_logs_fts(kb_logs_fts, rowid, message, source, level)
    VALUES ('delete', old.rowid, old.message, old.source, old.level);
END;
CREATE TRIGGER kb_logs_au AFTER UPDATE ON kb_logs BEGIN
    INSERT INTO kb_logs_fts(kb_logs_fts, rowid, message, source, level)
    VALUES ('delete', old.rowid, old.message, old.source, old.level);
    INSERT INTO kb_logs_fts(rowid, message, source, level)
    VALUES (new.rowid, new.message, new.source, new.level);
END;

-- 4. The knowledge-base version: bumped with every document or log write, part of every
--    `knowledge` cache key.
CREATE TABLE kb_versions (
    site_id TEXT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    version INTEGER NOT NULL DEFAULT 0
);
