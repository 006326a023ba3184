-- Allowed origins per site, indexed by origin so a CORS preflight (which carries no
-- key) can be answered for the origins some site allows, and refused for all others.
CREATE TABLE site_origins (
    origin   TEXT NOT NULL,
    site_id  TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    PRIMARY KEY (origin, site_id)
);
CREATE INDEX site_origins_by_site ON site_origins(site_id);
