-- Test before publish (issue 42): a site's draft and its published versions.
--
-- `sites.config` (with `name` and `template`) stays the live configuration: the only one
-- that serves visitors. `sites.draft` is what the merchant edits before publishing, as
-- JSON `{"name", "template", "config"}` without the site's keys; NULL when there is no
-- pending draft (the draft is then the live configuration). `sites.live_version` is the
-- number of the live configuration in `site_config_versions`.
ALTER TABLE sites ADD COLUMN draft TEXT;
ALTER TABLE sites ADD COLUMN live_version INTEGER NOT NULL DEFAULT 1;

-- Every configuration that went live (created, changed directly, published, restored),
-- as `{"name", "template", "config"}` without the site's keys; the last 100 per site.
-- `regressions` is for the publish gate: the cases a publish was confirmed over (JSON).
CREATE TABLE site_config_versions (
    site_id       TEXT NOT NULL,
    version       INTEGER NOT NULL,
    snapshot      TEXT NOT NULL,
    published_at  INTEGER NOT NULL,
    -- created | edited | published | restored | migrated
    source        TEXT NOT NULL,
    note          TEXT,
    restored_from INTEGER,
    regressions   TEXT,
    PRIMARY KEY (site_id, version)
);

-- The configuration each existing site has now is its version 1.
INSERT INTO site_config_versions (site_id, version, snapshot, published_at, source)
SELECT id, 1,
       json_object('name', name, 'template', template,
                   'config', json_remove(json(config), '$.public_key', '$.user_token_secret_sealed')),
       updated_at, 'migrated'
FROM sites;
