-- `guarded` (seed 004): compressed messages and the local search provider's pages.

-- A compressed message stays in the full history (display, `get_all_messages`,
-- `GET /v1/conversations/{id}`) but leaves the memory views (`get_context`,
-- `get_old_messages`). Set by `memory-server/memory/set_summary {compress: true}`.
ALTER TABLE messages ADD COLUMN compressed INTEGER NOT NULL DEFAULT 0;

-- The `local` web search provider: a site's own pages (tests, `make dev`, curated
-- sources), written by `PUT /admin/search-pages`.
CREATE TABLE search_fixtures (
    site_id        TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    query_pattern  TEXT NOT NULL DEFAULT '',
    title          TEXT NOT NULL DEFAULT '',
    content        TEXT NOT NULL,
    url            TEXT NOT NULL,
    PRIMARY KEY (site_id, position)
);
