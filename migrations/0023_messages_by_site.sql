-- The console's stats (per day, answered/unanswered, top questions) read one site's visitor
-- messages since a date. Without an index on site_id they scanned every site's messages, so
-- one merchant's console view stalled every other site's turns on the shared database
-- (SCALE-REVIEW.md §1, M0). With it they read the site's own range.
CREATE INDEX IF NOT EXISTS messages_site_role_created ON messages (site_id, role, created_at);
