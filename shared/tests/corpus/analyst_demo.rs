// The `analyst` demo data sets as the upload stores them (typed JSON rows), generated the
// way `scripts/seed-analyst.mjs` generates its CSV (the same fixed-seed generator, products,
// platforms and salary rule), at any size. Included by `tests/analyst_budget.rs` and
// `examples/bench_pipelines.rs`.

/// `don_hang`: `n` orders (the demo has 1,200).
pub fn demo_orders(n: usize) -> Vec<serde_json::Value> {
    let mut state: u64 = 20_240_101;
    let mut rand = move || {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        state as f64 / 2_147_483_648.0
    };
    let products = [
        ("Áo thun", 150_000),
        ("Quần jean", 420_000),
        ("Giày sneaker", 890_000),
        ("Váy hoa", 350_000),
        ("Áo khoác gió", 520_000),
        ("Túi tote", 180_000),
        ("Mũ lưỡi trai", 120_000),
        ("Áo sơ mi", 310_000),
    ];
    let platforms = ["Shopee", "Lazada", "Tiki", "TikTok Shop"];
    (0..n)
        .map(|_| {
            let day = 1 + (rand() * 28.0) as u32;
            let month = 1 + (rand() * 6.0) as u32;
            let (name, price) = products[(rand() * products.len() as f64) as usize];
            let qty = 1 + (rand() * 5.0) as i64;
            let platform = platforms[(rand() * platforms.len() as f64) as usize];
            serde_json::json!({
                "ngay": format!("2024-{month:02}-{day:02}"),
                "nen_tang": platform,
                "san_pham": name,
                "so_luong": qty,
                "don_gia": price,
                "doanh_thu": price * qty,
            })
        })
        .collect()
}

/// `luong_nhan_vien`: the second data set (15 salary rows, or more on request).
pub fn demo_salaries(n: usize) -> Vec<serde_json::Value> {
    let people = [
        "Nguyễn Văn An",
        "Trần Thị Bình",
        "Lê Minh Châu",
        "Phạm Quốc Dũng",
        "Hoàng Thu Hà",
    ];
    let departments = ["Kho", "Bán hàng", "Kế toán"];
    (0..n)
        .map(|i| {
            serde_json::json!({
                "ho_ten": people[i % people.len()],
                "phong_ban": departments[(i * 7 / 3) % departments.len()],
                "luong_co_ban": 8_000_000 + (i as i64 * 500_000) % 10_000_000,
                "thang": format!("2024-{:02}-01", 1 + (i / people.len()) % 12),
            })
        })
        .collect()
}
