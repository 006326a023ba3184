-- A site's test cases (issue 42, item 2): a question, optionally after a conversation and
-- as a user, with the checks its answer must pass (`concierge_core::test_cases::TestCase`
-- as JSON); at most 100 per site, written by `POST /admin/tests`.
CREATE TABLE test_cases (
    site_id    TEXT NOT NULL,
    id         TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (site_id, id)
);
