-- Handoff to a person (issue 28). The conversation's Durable Object holds the live state
-- and writes these columns whenever it changes; the console's list of waiting and held
-- conversations reads them.
--   handoff_state         'none' | 'waiting' (asked, nobody took it yet) | 'held' (a person has it)
--   handoff_requested_at  when the visitor asked (Unix ms); kept while waiting and held
--   handoff_since         when the current state began (Unix ms)
--   handoff_agent         the person's display name while held
ALTER TABLE conversations ADD COLUMN handoff_state TEXT NOT NULL DEFAULT 'none'
    CHECK (handoff_state IN ('none', 'waiting', 'held'));
ALTER TABLE conversations ADD COLUMN handoff_requested_at INTEGER;
ALTER TABLE conversations ADD COLUMN handoff_since INTEGER;
ALTER TABLE conversations ADD COLUMN handoff_agent TEXT;
-- The console's list: a site's waiting conversations oldest request first, then held ones.
CREATE INDEX IF NOT EXISTS conversations_handoff
    ON conversations (site_id, handoff_state, handoff_requested_at)
    WHERE handoff_state <> 'none';
