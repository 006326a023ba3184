-- The waiting-for-a-person queue's caps (issue 39): which client (its rate-limit key: an
-- IPv4 address or an IPv6 /64) last asked for a person in a conversation, so the Worker
-- can cap the conversations one client keeps waiting. Set by the Worker when it admits a
-- request for a person; NULL for conversations whose request came with the secret key.
ALTER TABLE conversations ADD COLUMN handoff_client TEXT;
CREATE INDEX IF NOT EXISTS conversations_handoff_client
    ON conversations (site_id, handoff_client)
    WHERE handoff_state = 'waiting';
