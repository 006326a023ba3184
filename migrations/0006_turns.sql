-- Turns (issue 10). A visitor's message carries its turn:
-- - reply_id: the id its reply is to be stored under. A reply is stored only while it
--   matches, so a retry (which moves it to a new id) stops an earlier attempt still
--   running from storing a second answer.
-- - idempotency_key: the client's `Idempotency-Key`, unique per conversation, so a
--   retried post never stores the visitor's message twice.
-- Replies take their `seq` when they are stored (MAX + 1 in the INSERT), so concurrent
-- turns in one conversation never collide.
ALTER TABLE messages ADD COLUMN reply_id TEXT;
ALTER TABLE messages ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX messages_by_idempotency_key
    ON messages(conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
