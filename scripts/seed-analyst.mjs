// Demo data sets of the `analyst` demo site, as CSV on stdout (`make dev` uploads them):
//   node scripts/seed-analyst.mjs orders [rows]   — don_hang: realistic Vietnamese orders
//   node scripts/seed-analyst.mjs salaries        — luong_nhan_vien: a second user's data
// Deterministic (a fixed-seed generator), so the demo's figures are the same every run.
let state = 20240101;
const rand = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
};
const pick = (list) => list[Math.floor(rand() * list.length)];

const products = [
    ["Áo thun", 150000], ["Quần jean", 420000], ["Giày sneaker", 890000], ["Váy hoa", 350000],
    ["Áo khoác gió", 520000], ["Túi tote", 180000], ["Mũ lưỡi trai", 120000], ["Áo sơ mi", 310000],
];
const platforms = ["Shopee", "Lazada", "Tiki", "TikTok Shop"];
const kind = process.argv[2] || "orders";

if (kind === "orders") {
    const rows = Number(process.argv[3] || 1200);
    const lines = ["ngay,nen_tang,san_pham,so_luong,don_gia,doanh_thu"];
    for (let i = 0; i < rows; i++) {
        const day = 1 + Math.floor(rand() * 28);
        const month = 1 + Math.floor(rand() * 6);
        const [name, price] = pick(products);
        const qty = 1 + Math.floor(rand() * 5);
        const grouped = (n) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ".");
        // Dates as d/m/yyyy and money with dot grouping, as a Vietnamese sheet exports them.
        lines.push(`${day}/${month}/2024,${pick(platforms)},${name},${qty},${grouped(price)},${grouped(price * qty)}`);
    }
    console.log(lines.join("\n"));
} else {
    const lines = ["ho_ten,phong_ban,luong_co_ban,thang"];
    const people = ["Nguyễn Văn An", "Trần Thị Bình", "Lê Minh Châu", "Phạm Quốc Dũng", "Hoàng Thu Hà"];
    for (const month of ["2024-01-01", "2024-02-01", "2024-03-01"]) {
        for (const person of people) {
            const salary = 8000000 + Math.floor(rand() * 20) * 500000;
            lines.push(`${person},${pick(["Kho", "Bán hàng", "Kế toán"])},${salary},${month}`);
        }
    }
    console.log(lines.join("\n"));
}
