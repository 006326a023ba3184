-- Concierge schema. Every row below `sites` carries its site_id, and every read is
-- scoped by it. Timestamps are Unix milliseconds.

CREATE TABLE sites (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    template         TEXT NOT NULL DEFAULT 'shop',
    -- JSON: persona, language, LLM settings, allowed origins, starter prompts.
    config           TEXT NOT NULL DEFAULT '{}',
    -- SHA-256 (hex) of the keys; the keys themselves are never stored.
    public_key_hash  TEXT NOT NULL UNIQUE,
    secret_key_hash  TEXT NOT NULL UNIQUE,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);

CREATE TABLE conversations (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    user_id     TEXT,
    language    TEXT NOT NULL DEFAULT 'vi',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX conversations_by_site ON conversations(site_id, created_at);

CREATE TABLE messages (
    id                TEXT PRIMARY KEY,
    site_id           TEXT NOT NULL,
    conversation_id   TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    kind              TEXT NOT NULL,
    content           TEXT NOT NULL,
    -- JSON object: intent, confidence, serial, embed_failed, ...
    metadata          TEXT NOT NULL DEFAULT '{}',
    embedding_status  TEXT NOT NULL DEFAULT 'pending'
                      CHECK (embedding_status IN ('pending', 'done', 'failed', 'skipped')),
    created_at        INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
);

CREATE TABLE summaries (
    conversation_id  TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    site_id          TEXT NOT NULL,
    content          TEXT NOT NULL,
    upto_seq         INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);

CREATE TABLE knowledge_documents (
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (site_id, id)
);

CREATE TABLE warranty_records (
    site_id         TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    serial          TEXT NOT NULL,
    product         TEXT NOT NULL,
    -- ISO date (YYYY-MM-DD) the warranty runs until.
    warranty_until  TEXT NOT NULL,
    PRIMARY KEY (site_id, serial)
);
