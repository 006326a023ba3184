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

-- Runs of a site's test cases against its draft or its live configuration (issue 42, item
-- 3): one row per run, one result per case, written by the test queue's consumer as each
-- case's turn ends. `draft_mark` is the draft the run ran (a digest of its JSON; NULL for
-- a run against the live configuration): the publish gate takes only a run of the draft
-- still pending.
CREATE TABLE test_runs (
    site_id      TEXT NOT NULL,
    id           TEXT NOT NULL,
    -- draft | live
    target       TEXT NOT NULL,
    live_version INTEGER NOT NULL,
    draft_mark   TEXT,
    total        INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (site_id, id)
);

-- One case's result in a run: `status` pending | passed | failed | error; `failed` names
-- the check that failed (or the error's code); `answer` is the answer's text; `verdict`
-- is the model's judgement of the case's rubric, when it has one.
CREATE TABLE test_results (
    site_id     TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    case_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending',
    answer      TEXT,
    failed      TEXT,
    latency_ms  INTEGER,
    tokens      INTEGER,
    finished_at INTEGER,
    verdict     TEXT,
    PRIMARY KEY (site_id, run_id, case_id)
);
