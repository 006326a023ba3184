-- Demo data for `make dev`: the `analyst` demo site (seed 001). Local-only keys: public
-- pk_analyst_demo, secret sk_analyst_demo_local_only (SHA-256 below). Its data sets (orders
-- of user "shop-owner", salaries of user "hr-manager") are uploaded through the admin API
-- once the Worker runs (scripts/seed-analyst.mjs writes the CSV).
INSERT INTO sites (id, name, template, config, public_key_hash, secret_key_hash, created_at, updated_at)
VALUES (
    'site_analyst_demo', 'Phân tích bán hàng', 'analyst',
    '{"allowed_origins":["http://127.0.0.1:8787","http://localhost:8787"],"language":"vi","starter_prompts":["Tổng doanh thu tháng 1/2024?","Top 3 sản phẩm bán chạy?","So sánh doanh thu tháng 2 với tháng 1"]}',
    '89531c27b542a4c05a635a001c4ba37058f55089d0cd1e70dd20c2f4abf3462b',
    'fee19de05fd6d7dc6213f3d9c228014408906593f0e5c20f7ce0b71345266bdf',
    0, 0)
ON CONFLICT (id) DO NOTHING;

INSERT INTO site_origins (origin, site_id) VALUES
    ('http://127.0.0.1:8787', 'site_analyst_demo'),
    ('http://localhost:8787', 'site_analyst_demo')
ON CONFLICT DO NOTHING;
