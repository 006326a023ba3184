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
    '{"language":"vi","title":"Tư vấn nha khoa","starter_prompts":["Làm sao để ngừa sâu răng?","Răng khôn mọc lệch có cần nhổ không?","Bao lâu nên cạo vôi răng một lần?"],"guarded":{"domain_vi":"NHA KHOA","domain_en":"DENTISTRY","assistant_id":"dental-duckduckgo","search":{"provider":"local"}}}',
    '7c7716cb634d71dffba607570010cdab814d43f10dbb9447c65937d32b31264d',
    '548dce515f6133f05dcdf5d8d164916c8f64c517e59f84caaf281a8fe73d646b',
    0, 0)
ON CONFLICT (id) DO NOTHING;

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
