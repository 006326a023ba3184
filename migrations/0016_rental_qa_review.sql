-- Learned rental Q&A (issue 24): what produced each entry, for reuse and review.
-- `role`: the role the SQL was written for (reused for that role only);
-- `context_free`: 1 when the SQL model's prompt held the question and nothing of a
-- conversation. Entries learned before (0, NULL) stay listed for the merchant to review
-- and delete, and are never reused: one visitor's conversation may have steered them.
ALTER TABLE rental_qa ADD COLUMN role TEXT;
ALTER TABLE rental_qa ADD COLUMN context_free INTEGER NOT NULL DEFAULT 0;
-- The admin list pages newest first.
CREATE INDEX IF NOT EXISTS rental_qa_recent ON rental_qa (site_id, created_at DESC, id DESC);
