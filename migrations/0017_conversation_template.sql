-- Which template answered a conversation (issue 26, item 11: the console's template
-- filter). Written when the conversation is created: the site's template at that time
-- (a site may switch templates later; its old conversations keep theirs). Conversations
-- created before this migration keep NULL: the console lists them under "unknown", and a
-- template filter never takes them.
ALTER TABLE conversations ADD COLUMN template TEXT;
-- The console lists a site's conversations by template, most recently active first.
CREATE INDEX IF NOT EXISTS conversations_site_template ON conversations (site_id, template, updated_at DESC);
