// A chart payload drawn as inline SVG for the chat panel (and the console's conversation
// view), loaded on demand by `rich.js` the first time an answer carries a chart: most
// answers have none, so this is not part of the panel's first download (scripts/sizes.sh).
// `rich.js` passes its helpers and the panel's words and number formats (`h`); every string
// becomes a text node or an attribute value, never markup.

// The chart's look, here rather than in the panel's stylesheet (the first download): the
// drawing 280 units wide (it shrinks in a narrower bubble, never grows), series colours AA
// on #fff, the legend.
const sheet = new CSSStyleSheet();
sheet.replaceSync(
  ".cw-chart figcaption{font-weight:600}" +
    ".cw-chart svg{width:280px;max-width:100%;height:auto;background:#fff;stroke-width:3}" +
    ".cw-chart rect,.cw-chart path{fill:var(--c);stroke:none}.cw-chart polyline{stroke:var(--c)}" +
    ".cw-rich .cw-legend{display:flex;flex-wrap:wrap;gap:0 .75rem;padding:0;list-style:none}" +
    ".cw-legend i{display:inline-block;width:.75rem;height:.75rem;margin-right:.25rem;background:var(--c)}" +
    ".cw-s0{--c:#0b3d91}.cw-s1{--c:#b35900}.cw-s2{--c:#1a7f37}.cw-s3{--c:#8250df}.cw-s4{--c:#a40e26}.cw-s5{--c:#0a6d79}"
);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

const MAX_LABELS = 60;
const MAX_SERIES = 6;
// A chart's drawing, in CSS pixels at its natural width (the stylesheet lets it shrink in
// a narrower bubble, never grow): text stays at FONT px, at least 12 px on screen.
const W = 280;
const H = 200;
const FONT = 13;
const GLYPH = FONT * 0.52; // a glyph's average width, to decide what fits

/** A chart drawn as inline SVG: a title (the payload's, else its series' name), category
 * labels (wrapped on two lines, every k-th when crowded), a value axis with gridlines and
 * formatted ticks, value labels where they fit, a legend for several series or a pie's
 * slices, and a text alternative in the panel's words with every value (the first 30). */
export function chart(out, data, h) {
  const { el, svg, arr, str, label, amount, words, format, compact, percent } = h;
  const kind = ["bar", "line", "pie"].indexOf(data.chart);
  const labels = arr(data.labels).slice(0, MAX_LABELS).map(str);
  const series = arr(data.series).slice(0, MAX_SERIES);
  if (kind < 0 || !labels.length || !series.length) return;
  // Missing, negative and non-finite values count as 0.
  const values = series.map((s) => labels.map((_, i) => {
    const v = arr(s && s.values)[i];
    return typeof v === "number" && isFinite(v) && v > 0 ? v : 0;
  }));
  const raw = series.map((s, k) => str(s && s.name) || String(k + 1));
  const names = raw.map((n) => label(n));
  const value = (k, v) => amount(v, raw[k]);
  const pie = kind === 2;
  const total = values[0].reduce((a, b) => a + b, 0) || 1;
  const share = (v) => `${value(0, v)} (${percent.format(v / total)})`;
  const title = str(data.title) || (series.length === 1 ? names[0] : words[28]);
  const figure = el(out, "figure", "cw-chart");
  el(figure, "figcaption", "", title);
  const alt = labels.slice(0, 30).map((l, i) => `${l}: ${pie ? share(values[0][i])
    : series.length > 1 ? values.map((s, k) => `${names[k]} ${value(k, s[i])}`).join(", ") : value(0, values[0][i])}`);
  const canvas = svg(figure, "svg", {
    viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": `${words[25 + kind]}: ${title}. ${alt.join("; ")}${labels.length > 30 ? "; …" : ""}`,
  });
  const colour = (k) => "cw-s" + (k % MAX_SERIES);
  // Text's look as presentation attributes (the stylesheets may still override them, as
  // dark mode does): drawn here, not in the panel's first-load stylesheet.
  const text = (x, y, t, cls) => {
    svg(canvas, "text", {
      x: Math.round(x), y: Math.round(y), class: cls || "", "font-size": FONT, stroke: "none",
      fill: cls === "cw-value" ? "#1f2328" : "#57606a", "text-anchor": cls === "cw-axis" ? "end" : "middle",
    }).textContent = t;
  };
  const legend = [];
  if (pie) {
    const v = values[0];
    const [cx, cy, r] = [W / 2, H / 2, H / 2 - 8];
    const at = (t) => [cx + r * Math.cos(t * 2 * Math.PI - Math.PI / 2), cy + r * Math.sin(t * 2 * Math.PI - Math.PI / 2)].map(Math.round);
    let start = 0;
    v.forEach((x, i) => {
      legend.push([i, `${labels[i]}: ${share(x)}`]);
      if (!x) return;
      const end = start + x / total;
      const [x0, y0] = at(start);
      const [x1, y1] = at(end);
      const d = x / total > 0.9999
        ? `M${cx},${cy - r}a${r},${r} 0 1,1 0,${2 * r}a${r},${r} 0 1,1 0,-${2 * r}Z`
        : `M${cx},${cy}L${x0},${y0}A${r},${r} 0 ${end - start > 0.5 ? 1 : 0},1 ${x1},${y1}Z`;
      svg(canvas, "path", { class: colour(i), d });
      start = end;
    });
  } else {
    // A round step giving about four gridlines above 0.
    const peak = Math.max(...values.flat()) || 1;
    const magnitude = 10 ** Math.floor(Math.log10(peak / 4));
    const step = [1, 2, 2.5, 5, 10].find((m) => m * magnitude >= peak / 4) * magnitude;
    const top = Math.ceil(peak / step) * step;
    const ticks = [];
    for (let v = 0; v <= top + step / 2; v += step) ticks.push(v);
    const tick = (v) => (top >= 1e4 ? compact : format).format(v);
    const left = 8 + GLYPH * Math.max(...ticks.map((v) => tick(v).length));
    const [right, upper, lower] = [W - 4, FONT + 6, H - 2 * FONT - 10];
    const y = (v) => lower - (v / top) * (lower - upper);
    const n = labels.length;
    const slot = (right - left) / n;
    svg(canvas, "path", { class: "cw-grid", fill: "none", stroke: "#d0d7de", "stroke-width": 1, d: ticks.map((v) => `M${Math.round(left)},${Math.round(y(v))}H${right}`).join("") });
    for (const v of ticks) text(left - 4, y(v) + FONT * 0.35, tick(v), "cw-axis");
    // Value labels where each fits over its bar (or point): one series, or bars wide enough.
    const fits = (v, width) => compact.format(v).length * GLYPH <= width;
    const x = (i) => left + slot * (i + 0.5);
    values.forEach((s, k) => {
      if (kind === 0) {
        const w = (slot * 0.8) / values.length;
        s.forEach((v, i) => {
          const bx = left + slot * i + slot * 0.1 + w * k;
          svg(canvas, "rect", { class: colour(k), x: Math.round(bx), y: Math.round(y(v)), width: Math.max(1, Math.round(w)), height: Math.round(lower - y(v)) });
          if (s.every((u) => fits(u, (slot * 0.95) / values.length))) text(bx + w / 2, y(v) - 4, compact.format(v), "cw-value");
        });
      } else {
        svg(canvas, "polyline", { class: colour(k), points: s.map((v, i) => `${Math.round(x(i))},${Math.round(y(v))}`).join(" ") });
        if (values.length === 1 && s.every((u) => fits(u, slot))) s.forEach((v, i) => text(x(i), y(v) - 6, compact.format(v), "cw-value"));
      }
    });
    // Category labels: every k-th when crowded, each on up to two lines of its slots' width.
    const every = Math.ceil(n / Math.max(1, Math.floor((right - left) / 44)));
    const chars = Math.max(3, Math.floor((slot * every) / GLYPH));
    for (let i = 0; i < n; i += every) {
      wrap(labels[i], chars).forEach((line, j) => text(x(i), lower + FONT + 4 + j * (FONT + 2), line));
    }
    if (series.length > 1) names.forEach((name, k) => legend.push([k, name]));
  }
  if (legend.length) {
    const ul = el(figure, "ul", "cw-legend");
    for (const [k, t] of legend) el(el(ul, "li"), "i", colour(k)).after(t);
  }
}

/** `text` in at most two lines of `width` characters, the rest cut with "…". */
function wrap(text, width) {
  const lines = [""];
  for (const word of text.split(/\s+/)) {
    const line = lines[lines.length - 1];
    if (!line || (line + " " + word).length <= width) lines[lines.length - 1] = line ? line + " " + word : word;
    else lines.push(word);
  }
  const out = lines.slice(0, 2).map((l) => (l.length > width ? l.slice(0, width - 1) + "…" : l));
  if (lines.length > 2 && !out[1].endsWith("…")) out[1] = out[1].slice(0, width - 1) + "…";
  return out;
}

