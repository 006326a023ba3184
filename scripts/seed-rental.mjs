// Deterministic demo listings for the `rental` demo site (`make dev`): a few thousand
// rooms, rental posts and room-seeking posts across Hà Nội and TP.HCM districts, as SQL
// for the LISTINGS database. Usage: node scripts/seed-rental.mjs [site_id] > file.sql
const site = process.argv[2] || "site_rental_demo";
let state = 20260514;
const rand = () => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 4294967296;
};
const pick = (list) => list[Math.floor(rand() * list.length)];
const cities = {
  "Hà Nội": [["Ba Đình", 1.3], ["Hoàn Kiếm", 1.6], ["Đống Đa", 1.1], ["Cầu Giấy", 1.15], ["Thanh Xuân", 1.0],
    ["Hai Bà Trưng", 1.1], ["Hoàng Mai", 0.85], ["Long Biên", 0.9], ["Tây Hồ", 1.4], ["Nam Từ Liêm", 0.95]],
  "TP.HCM": [["Quận 1", 1.7], ["Quận 3", 1.5], ["Quận 5", 1.2], ["Quận 7", 1.25], ["Quận 10", 1.2],
    ["Bình Thạnh", 1.15], ["Gò Vấp", 0.9], ["Phú Nhuận", 1.2], ["Tân Bình", 1.05], ["Thủ Đức", 0.85]],
};
const streets = ["Lê Lợi", "Nguyễn Trãi", "Trần Hưng Đạo", "Hai Bà Trưng", "Lý Thường Kiệt", "Phan Đình Phùng",
  "Nguyễn Văn Cừ", "Cách Mạng Tháng Tám", "Quang Trung", "Lê Văn Sỹ", "Xuân Thủy", "Kim Mã"];
const kinds = ["Phòng trọ", "Phòng khép kín", "Căn hộ mini", "Studio", "Phòng gác lửng", "Ký túc xá"];
const names = ["Lan Anh", "Bình An", "Hoa Mai", "Minh Tâm", "Thành Công", "Sen Vàng", "Phú Quý", "Hạnh Phúc"];
const day = (start, span) => {
  const d = new Date(Date.UTC(2025, 0, 1) + Math.floor(rand() * span + start) * 86400000);
  return d.toISOString().slice(0, 10);
};
const place = () => {
  const city = rand() < 0.5 ? "Hà Nội" : "TP.HCM";
  const [district, factor] = pick(cities[city]);
  return { city, district, factor, ward: `Phường ${1 + Math.floor(rand() * 15)}` };
};
const rows = [];
const price = (factor) => Math.round((1200000 + rand() * 4800000) * factor / 50000) * 50000;
for (let i = 1; i <= 3000; i++) {
  const p = place();
  rows.push(["room", `r${i}`, {
    title: `${pick(kinds)} ${pick(names)} ${p.district}`, price: price(p.factor),
    area_m2: Math.round((12 + rand() * 38) * 10) / 10, district: p.district, ward: p.ward, city: p.city,
    address: `${1 + Math.floor(rand() * 300)} ${pick(streets)}`, status: rand() < 0.75 ? "available" : "rented",
    owner_id: `landlord-${1 + Math.floor(rand() * 60)}`, created_at: day(0, 680),
  }]);
}
for (let i = 1; i <= 1200; i++) {
  const p = place();
  rows.push(["post", `p${i}`, {
    title: `Cho thuê ${pick(kinds).toLowerCase()} gần ${pick(streets)}, ${p.district}`, price: price(p.factor),
    district: p.district, ward: p.ward, city: p.city, status: rand() < 0.8 ? "active" : "closed",
    created_at: day(120, 560),
  }]);
}
for (let i = 1; i <= 800; i++) {
  const p = place();
  rows.push(["room_seeking_post", `s${i}`, {
    title: `Cần tìm phòng ở ${p.district}`, budget_max: price(p.factor), district: p.district,
    ward: p.ward, city: p.city, created_at: day(200, 480),
  }]);
}
const sql = (text) => `'${text.replace(/'/g, "''")}'`;
const out = [];
for (let i = 0; i < rows.length; i += 100) {
  const values = rows.slice(i, i + 100)
    .map(([entity, id, data]) => `(${sql(site)}, ${sql(entity)}, ${sql(id)}, ${sql(JSON.stringify(data))}, 0)`);
  out.push(`INSERT INTO rental_rows (site_id, entity, id, data, updated_at) VALUES\n${values.join(",\n")}\n` +
    "ON CONFLICT (site_id, entity, id) DO UPDATE SET data = excluded.data;");
}
process.stdout.write(out.join("\n") + "\n");
