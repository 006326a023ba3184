-- Issue 11 (templates are a type; visitor identity).
--
-- 1. `sites.template` admits only template names: shop, analyst, rental, knowledge,
--    guarded (concierge_core::template::Template). Every stored value other than `shop`
--    becomes `shop`: until now every site ran `shop` whatever it named (`support`, the
--    old name of `guarded`, and the other unbuilt names included), so this keeps each
--    site answering exactly as it did; a site picks another template again once that
--    template is built.
--
--    The rule is enforced by triggers, not by a CHECK on a rebuilt table. Rebuilding
--    `sites` means dropping it, and SQLite's DROP TABLE first deletes every row, which
--    fires the ON DELETE CASCADE of `conversations`, `knowledge_documents`,
--    `warranty_records` and `site_origins` (and through `conversations`, `messages` and
--    `summaries`): `PRAGMA defer_foreign_keys` defers constraint checks, not cascade
--    actions, and D1 cannot turn foreign keys off inside a migration. The triggers refuse
--    the same writes a CHECK would (INSERT, and UPDATE of the column), and keep every row.
UPDATE sites SET template = 'shop' WHERE template <> 'shop';

CREATE TRIGGER sites_template_insert BEFORE INSERT ON sites
WHEN NEW.template NOT IN ('shop', 'analyst', 'rental', 'knowledge', 'guarded')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: sites.template');
END;

CREATE TRIGGER sites_template_update BEFORE UPDATE OF template ON sites
WHEN NEW.template NOT IN ('shop', 'analyst', 'rental', 'knowledge', 'guarded')
BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: sites.template');
END;

-- 2. A conversation is bound to the verified identity it was created with (a signed user
--    token's claims, or the identity a secret-key call stated): JSON
--    `{"sub", "role"?, "permissions"?, "department"?}`; NULL is anonymous. Existing
--    conversations were created without a verified identity (a `user_id` a public-key
--    caller sent identifies nobody), so they stay anonymous.
ALTER TABLE conversations ADD COLUMN identity TEXT;
