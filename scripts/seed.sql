-- Demo data for local runs (`make dev`): one shop site and its warranty records.
-- Local-only keys: public pk_demo, secret sk_demo_local_only (SHA-256 below).
INSERT INTO sites (id, name, template, config, public_key_hash, secret_key_hash, created_at, updated_at)
VALUES (
    'site_demo', 'An Phát PC', 'shop',
    '{"allowed_origins":["http://127.0.0.1:8787","http://localhost:8787"],"language":"vi","starter_prompts":["Tư vấn cấu hình PC chơi game 20 triệu","Kiểm tra bảo hành","Galaxy S23 Ultra giá bao nhiêu?"]}',
    'bfa4e7b441c615466a2970283d095c83ff744f3114fc4c62445793183a0e2b6e',
    'eb19ee4ff4e47bdde2e9e8bb8f1c49d76b7df468cfd72128dc4892736bd803c8',
    0, 0)
ON CONFLICT (id) DO NOTHING;

INSERT INTO warranty_records (site_id, serial, product, warranty_until) VALUES
    ('site_demo', '0979825281', 'S23 Ultra', '2026-08-12'),
    ('site_demo', 'AP4060-2025-0001', 'PC Gaming AP-4060', '2028-03-01'),
    ('site_demo', 'LG27GP850-7781', 'Màn hình LG 27GP850', '2027-01-15')
ON CONFLICT (site_id, serial) DO UPDATE SET product = excluded.product, warranty_until = excluded.warranty_until;

INSERT INTO site_origins (origin, site_id) VALUES
    ('http://127.0.0.1:8787', 'site_demo'),
    ('http://localhost:8787', 'site_demo')
ON CONFLICT DO NOTHING;
