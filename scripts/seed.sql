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

-- The demo knowledge base: a small catalog and the store's policies. `make dev` queues
-- them for indexing (POST /admin/index) once the Worker is up.
INSERT INTO knowledge_documents (site_id, id, title, content, updated_at, index_status) VALUES
    ('site_demo', 'catalog-pc', 'PC lắp sẵn',
     'PC Gaming AP-4060: Core i5-12400F, RTX 4060 8GB, RAM 16GB DDR4 3200, SSD NVMe 512GB, nguồn 650W 80 Plus Bronze. Giá 18.990.000 VND. Chơi tốt game eSports và AAA ở 1080p. '
     || 'PC Đồ họa AP-4070S: Core i7-13700F, RTX 4070 Super 12GB, RAM 32GB DDR5, SSD 1TB, nguồn 750W 80 Plus Gold. Giá 36.490.000 VND. Phù hợp render, Premiere, Blender. '
     || 'PC Văn phòng AP-Office: Core i3-12100, RAM 8GB, SSD 256GB, không card rời. Giá 7.990.000 VND.',
     0, 'pending'),
    ('site_demo', 'catalog-parts', 'Linh kiện',
     'Card đồ họa RTX 4060 8GB: 8.490.000 VND. RTX 4070 Super 12GB: 17.990.000 VND. CPU Core i5-12400F: 2.990.000 VND. '
     || 'Mainboard B760M DDR4: 2.890.000 VND. RAM 16GB DDR4 3200 (2x8GB): 990.000 VND. SSD NVMe 1TB: 1.690.000 VND. '
     || 'Nguồn 650W 80 Plus Bronze: 1.290.000 VND. Tản nhiệt khí tháp đơn: 490.000 VND. Màn hình LG 27GP850 27 inch 2K 180Hz: 8.290.000 VND.',
     0, 'pending'),
    ('site_demo', 'catalog-phones', 'Điện thoại',
     'Samsung Galaxy S23 Ultra 12GB/256GB: 22.490.000 VND, bảo hành chính hãng 12 tháng. Samsung Galaxy A55 8GB/128GB: 9.490.000 VND.',
     0, 'pending'),
    ('site_demo', 'policy-warranty', 'Chính sách bảo hành',
     'Sản phẩm được bảo hành theo số serial. PC lắp sẵn bảo hành 36 tháng, linh kiện 12 đến 36 tháng theo hãng, điện thoại 12 tháng. '
     || 'Lỗi phần cứng do nhà sản xuất trong 7 ngày đầu được 1 đổi 1 (DOA). Không bảo hành khi sản phẩm rơi vỡ, vào nước, cháy nổ do nguồn điện hoặc tem bảo hành bị rách. '
     || 'Quý khách mang sản phẩm kèm hóa đơn đến trung tâm bảo hành tại cửa hàng; thời gian xử lý 3 đến 7 ngày làm việc.',
     0, 'pending'),
    ('site_demo', 'policy-shipping', 'Giao hàng, thanh toán, đổi trả',
     'Giao hàng toàn quốc, miễn phí nội thành cho đơn từ 2.000.000 VND; ngoại thành 2 đến 4 ngày. Thanh toán tiền mặt khi nhận hàng, chuyển khoản hoặc trả góp 0% qua thẻ tín dụng. '
     || 'Đổi trả trong 7 ngày nếu sản phẩm còn nguyên hộp và phụ kiện.',
     0, 'pending')
ON CONFLICT (site_id, id) DO UPDATE SET title = excluded.title, content = excluded.content;

-- The `guarded` demo (seed 004): a dental advisor in Vietnamese, searching the site's own
-- pages (the `local` provider). Local-only keys: public pk_dental_demo, secret
-- sk_dental_local_only. Its OpenAI-compatible model id is the seed's `dental-duckduckgo`.
INSERT INTO sites (id, name, template, config, public_key_hash, secret_key_hash, created_at, updated_at)
VALUES (
    'site_dental', 'Nha khoa Mẫu', 'guarded',
    '{"allowed_origins":["http://127.0.0.1:8787","http://localhost:8787"],"language":"vi","title":"Tư vấn nha khoa","starter_prompts":["Làm sao để ngừa sâu răng?","Răng khôn mọc lệch có cần nhổ không?","Bao lâu nên cạo vôi răng một lần?"],"guarded":{"domain_vi":"NHA KHOA","domain_en":"DENTISTRY","assistant_id":"dental-duckduckgo","search":{"provider":"local"}}}',
    '7c7716cb634d71dffba607570010cdab814d43f10dbb9447c65937d32b31264d',
    '548dce515f6133f05dcdf5d8d164916c8f64c517e59f84caaf281a8fe73d646b',
    0, 0)
ON CONFLICT (id) DO NOTHING;
-- A database seeded before the guarded demo allowed the demo origins: allow them, unless
-- its origins were set since.
UPDATE sites SET config = json_set(config, '$.allowed_origins',
    json('["http://127.0.0.1:8787","http://localhost:8787"]'))
WHERE id = 'site_dental'
  AND json_array_length(coalesce(json_extract(config, '$.allowed_origins'), '[]')) = 0;

INSERT INTO search_fixtures (site_id, position, query_pattern, title, content, url) VALUES
    ('site_dental', 0, 'sâu răng', 'Sâu răng: nguyên nhân, dấu hiệu và cách phòng ngừa',
     'Sâu răng hình thành khi vi khuẩn trong mảng bám chuyển hóa đường thành axit làm mòn men răng. Dấu hiệu sớm là đốm trắng đục, sau đó là lỗ sâu màu nâu đen và ê buốt khi ăn ngọt. Phòng ngừa: chải răng hai lần mỗi ngày với kem có fluor, dùng chỉ nha khoa, hạn chế đồ ngọt và khám răng định kỳ 6 tháng một lần.',
     'https://nhakhoa-demo.example/kien-thuc/sau-rang'),
    ('site_dental', 1, 'răng khôn', 'Răng khôn mọc lệch: khi nào cần nhổ?',
     'Răng khôn (răng số 8) thường mọc từ 17 đến 25 tuổi. Răng mọc lệch, mọc ngầm hoặc gây viêm lợi trùm, sâu răng số 7 bên cạnh thường được chỉ định nhổ. Bác sĩ sẽ chụp phim X-quang để đánh giá vị trí răng và dây thần kinh trước khi tiểu phẫu.',
     'https://nhakhoa-demo.example/kien-thuc/rang-khon'),
    ('site_dental', 2, 'cạo vôi', 'Cạo vôi răng định kỳ: bao lâu một lần?',
     'Vôi răng là mảng bám đã khoáng hóa, không thể làm sạch bằng bàn chải. Nên cạo vôi răng 6 tháng một lần, hoặc 3 đến 4 tháng với người hút thuốc, bị viêm nướu hay đang niềng răng. Cạo vôi đúng kỹ thuật không làm mòn men răng.',
     'https://nhakhoa-demo.example/dich-vu/cao-voi-rang'),
    ('site_dental', 3, 'chảy máu chân răng', 'Chảy máu chân răng và viêm nướu',
     'Chảy máu khi chải răng thường là dấu hiệu viêm nướu do mảng bám tích tụ ở viền nướu. Chải răng nhẹ nhàng bằng bàn chải lông mềm, dùng chỉ nha khoa và cạo vôi răng giúp nướu hồi phục sau 1 đến 2 tuần. Nếu kéo dài, cần khám để loại trừ viêm nha chu.',
     'https://nhakhoa-demo.example/kien-thuc/viem-nuou'),
    ('site_dental', 4, 'implant', 'Trồng răng implant: quy trình và chăm sóc',
     'Implant là trụ titan đặt vào xương hàm thay chân răng đã mất, sau 3 đến 6 tháng tích hợp xương thì gắn mão sứ. Thủ thuật được gây tê nên ít đau. Cần vệ sinh kỹ quanh implant và tái khám định kỳ để implant bền lâu.',
     'https://nhakhoa-demo.example/dich-vu/trong-rang-implant'),
    ('site_dental', 5, 'ê buốt', 'Răng ê buốt khi ăn uống đồ lạnh',
     'Ê buốt xảy ra khi ngà răng bị lộ do mòn men, tụt nướu hoặc sâu răng. Dùng kem đánh răng chống ê buốt, tránh chải răng quá mạnh và hạn chế đồ uống có axit. Nha sĩ có thể bôi vecni fluor hoặc trám phủ vùng cổ răng bị mòn.',
     'https://nhakhoa-demo.example/kien-thuc/e-buot')
ON CONFLICT (site_id, position) DO UPDATE SET query_pattern = excluded.query_pattern,
    title = excluded.title, content = excluded.content, url = excluded.url;
-- The `knowledge` demo site (seed 003): an internal knowledge base for HR, IT and general
-- questions. Local-only keys: public pk_kb_demo, secret sk_kb_demo_local_only. Documents
-- at all three scopes, two of them deliberately conflicting (the 2023 lateness policy,
-- public, against the 2026 one, private), and a small log file for `log_tool`. Ask as a
-- user with the secret key: POST /conversations {"user_id","permissions","department"}.
INSERT INTO sites (id, name, template, config, public_key_hash, secret_key_hash, created_at, updated_at)
VALUES (
    'site_kb_demo', 'Công ty An Phát — Tri thức nội bộ', 'knowledge',
    '{"allowed_origins":["http://127.0.0.1:8787","http://localhost:8787"],"language":"vi","starter_prompts":["Giá trị cốt lõi của công ty là gì?","Đi muộn bị xử lý thế nào?","Tại sao tôi không đăng nhập VPN được?"],"knowledge":{"workflow":{"min_relevance_score":0.3}}}',
    '3283f7c0092d80dd11cc9fcc0375805fab1e5eb03f5ee0fbba16e4ab2affd5e6',
    'f5aa3e38a3b6f72ccd3f8829ac0ad207c5ac27afbabecbc0700b8e2ae8dac0f9',
    0, 0)
ON CONFLICT (id) DO NOTHING;

INSERT INTO knowledge_documents (site_id, id, title, content, updated_at, index_status, scope, department, url, source_created_at) VALUES
    ('site_kb_demo', 'core-values', 'Giá trị cốt lõi',
     'Công ty có 4 giá trị cốt lõi: Khách hàng trước tiên, Chính trực, Hợp tác, Kỷ luật. Mỗi nhân viên được đánh giá theo các giá trị này trong kỳ đánh giá hiệu suất.',
     0, 'pending', 'public', 'general', 'https://intra.company/about/core-values', '2026-06-10T08:00:00Z'),
    ('site_kb_demo', 'office-hours', 'Giờ làm việc',
     'Văn phòng làm việc từ 8h30 đến 17h30, thứ Hai đến thứ Sáu. Nghỉ trưa từ 12h00 đến 13h00.',
     0, 'pending', 'internal', 'general', 'https://intra.company/about/office-hours', '2026-01-05T08:00:00Z'),
    ('site_kb_demo', 'punctuality-2023', 'Nội quy đi muộn (2023)',
     'Đi muộn quá 15 phút bị nhắc nhở miệng. Không ảnh hưởng đến đánh giá KPI.',
     0, 'pending', 'public', 'hr', 'https://intra.company/policies/punctuality-2023', '2023-03-01T00:00:00Z'),
    ('site_kb_demo', 'punctuality-2026', 'Nội quy đi muộn (2026)',
     'Từ năm 2026: đi muộn quá 10 phút tính là một lần vi phạm; 3 lần trong tháng bị trừ 5% điểm KPI và cảnh báo nội bộ; ảnh hưởng giá trị Kỷ luật.',
     0, 'pending', 'private', 'hr', 'https://intra.company/policies/punctuality', '2026-11-01T03:12:45Z'),
    ('site_kb_demo', 'leave-policy', 'Chính sách nghỉ phép',
     'Nhân viên chính thức có 12 ngày phép năm; ngày phép không dùng hết được chuyển tối đa 5 ngày sang quý I năm sau. Nghỉ phép được hưởng nguyên lương cơ bản (lương ngày = lương tháng / 26).',
     0, 'pending', 'internal', 'hr', 'https://intra.company/hr/leave', '2026-09-15T00:00:00Z'),
    ('site_kb_demo', 'salary-bands', 'Khung lương',
     'Khung lương kỹ sư: bậc 1 từ 15 đến 22 triệu, bậc 2 từ 22 đến 35 triệu, bậc 3 từ 35 đến 55 triệu đồng mỗi tháng.',
     0, 'pending', 'private', 'hr', 'https://intra.company/hr/salary-bands', '2026-10-20T00:00:00Z'),
    ('site_kb_demo', 'vpn-guide', 'Hướng dẫn VPN',
     'Kết nối VPN bằng ứng dụng AnPhat Connect, đăng nhập bằng tài khoản email công ty và mã OTP. Sai mật khẩu 5 lần tài khoản bị khóa 30 phút.',
     0, 'pending', 'internal', 'it', 'https://intra.company/it/vpn', '2026-08-01T00:00:00Z'),
    ('site_kb_demo', 'security-incident', 'Quy trình sự cố bảo mật',
     'Khi nghi ngờ lộ mật khẩu hoặc email lừa đảo: đổi mật khẩu ngay, báo security@company trong vòng 1 giờ, không xóa email nghi ngờ.',
     0, 'pending', 'private', 'it', 'https://intra.company/it/security-incident', '2026-11-10T00:00:00Z'),
    ('site_kb_demo', 'wifi-guest', 'Wi-Fi khách',
     'Mạng Wi-Fi khách là AnPhat-Guest, mật khẩu được in ở quầy lễ tân, đổi hàng tuần.',
     0, 'pending', 'public', 'it', 'https://intra.company/it/wifi', '2026-11-18T00:00:00Z')
ON CONFLICT (site_id, id) DO UPDATE SET title = excluded.title, content = excluded.content,
    scope = excluded.scope, department = excluded.department, url = excluded.url,
    source_created_at = excluded.source_created_at;

INSERT INTO kb_logs (site_id, id, ts, level, source, message) VALUES
    ('site_kb_demo', '1', '2026-11-20T08:01:12Z', 'INFO', 'vpn-gw', 'VPN login ok for user binh.tran'),
    ('site_kb_demo', '2', '2026-11-20T08:03:40Z', 'WARN', 'vpn-gw', 'VPN login failed for user an.nguyen: bad password (attempt 4)'),
    ('site_kb_demo', '3', '2026-11-20T08:04:02Z', 'ERROR', 'vpn-gw', 'VPN account an.nguyen locked for 30 minutes after 5 failed logins'),
    ('site_kb_demo', '4', '2026-11-20T09:15:00Z', 'INFO', 'mail', 'Phishing report received from chi.le, message quarantined'),
    ('site_kb_demo', '5', '2026-11-20T10:30:00Z', 'ERROR', 'hr-portal', 'Timesheet sync failed: upstream timeout')
ON CONFLICT (site_id, id) DO NOTHING;

-- The logs above are written where an older version kept them: the site's object
-- (SiteObject) imports them on its first call (README, "Upgrading to site objects").
INSERT INTO kb_versions (site_id, version, has_logs) VALUES ('site_kb_demo', 1, 1)
ON CONFLICT (site_id) DO UPDATE SET version = version + 1, has_logs = 1;

INSERT INTO site_origins (origin, site_id) VALUES
    ('http://127.0.0.1:8787', 'site_kb_demo'),
    ('http://localhost:8787', 'site_kb_demo')
ON CONFLICT DO NOTHING;
