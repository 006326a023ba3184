-- Structured content stored with a reply (issue 11): an assistant reply keeps the payloads
-- its turn sent (lists, tables, charts, sources, evidence, control requests) as a JSON array
-- of {"kind", "data"}, in the order sent, so history and replays carry them. NULL: none.
ALTER TABLE messages ADD COLUMN payloads TEXT;
