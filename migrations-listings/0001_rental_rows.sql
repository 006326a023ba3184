-- The `rental` template's listings, in their own D1 database (binding LISTINGS): the
-- generated SQL runs here, so even a validator bypass could not reach keys, sites or
-- conversations (they live in DB). Statements read it only through CTEs filtered by the
-- requesting site's id (flows::rental::schema).
CREATE TABLE IF NOT EXISTS rental_rows (
  site_id TEXT NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('room', 'post', 'room_seeking_post')),
  id TEXT NOT NULL,
  data TEXT NOT NULL,            -- the listing's columns, as a JSON object
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (site_id, entity, id)
);
