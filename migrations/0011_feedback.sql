-- Visitors' feedback on assistant answers (issue 17): thumbs up (1) or down (-1) and an
-- optional comment, one per message per voter; voting again replaces it. `voter` is who
-- voted: `user:<sub>` (a verified identity), `anonymous` (the visitor of an anonymous
-- conversation, which only that visitor's browser reaches) or `site` (the site's server,
-- with the secret key).
CREATE TABLE message_feedback (
    site_id          TEXT NOT NULL,
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id       TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    voter            TEXT NOT NULL,
    rating           INTEGER NOT NULL CHECK (rating IN (-1, 1)),
    comment          TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    PRIMARY KEY (message_id, voter)
);

CREATE INDEX message_feedback_by_site ON message_feedback (site_id, updated_at DESC);
