-- The `rental` template (seed 002): roles of known users, learned Q&A (validated
-- question + SQL, reused by canonical lookup), and the seed endpoint's sessions.
-- Listings live in the LISTINGS database (migrations-listings/).
CREATE TABLE IF NOT EXISTS rental_users (
  site_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('TENANT', 'LANDLORD')),
  PRIMARY KEY (site_id, user_id)
);

CREATE TABLE IF NOT EXISTS rental_qa (
  site_id TEXT NOT NULL,
  id TEXT NOT NULL,
  question TEXT NOT NULL,
  sql TEXT NOT NULL,
  request_type TEXT NOT NULL,
  mode TEXT,
  created_at INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (site_id, id)
);

-- POST /ai/chat sessions: `user_{userId}` or `ip_{sha256(ip)[..16]}` → the conversation
-- holding them; idle for more than 30 minutes, the cron deletes both.
CREATE TABLE IF NOT EXISTS rental_sessions (
  site_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  last_active_at INTEGER NOT NULL,
  PRIMARY KEY (site_id, session_id)
);
CREATE INDEX IF NOT EXISTS rental_sessions_idle ON rental_sessions (last_active_at);
