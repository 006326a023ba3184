-- The `analyst` template (seed 001): merchant data sets ("connections"), each owned by one
-- user identity of one site, with their rows as typed JSON objects (TEMPLATES.md §1.3).
CREATE TABLE IF NOT EXISTS data_connections (
  site_id TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  schema TEXT NOT NULL,          -- JSON [{name,type,examples}] inferred at upload
  row_count INTEGER NOT NULL,
  source_url TEXT,               -- a CSV URL to re-sync from, when imported from one
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (site_id, id),
  UNIQUE (site_id, user_id, name)
);

CREATE TABLE IF NOT EXISTS data_rows (
  site_id TEXT NOT NULL,
  connection_id TEXT NOT NULL,
  row_index INTEGER NOT NULL,
  data TEXT NOT NULL,            -- JSON object, values typed at upload
  PRIMARY KEY (site_id, connection_id, row_index)
);
