// Concierge console: a stored answer's markdown as DOM, the subset the chat panel draws
// (widget/src/markdown.rs): paragraphs, headings, bullet and numbered lists, fenced code,
// GFM tables, **bold**, *italic*, `code` and [links](https://…). Text only ever becomes
// text nodes; links only to absolute http(s) URLs, opened in a new tab without referrer.

const node = (parent, tag, cls, text) => {
  const e = parent.appendChild(document.createElement(tag));
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
};

/** Inline markup of `text` into `parent`. */
function inline(parent, text) {
  const pattern = /(\*\*|__)(.+?)\1|(\*|_)(?!\s)(.+?)\3|`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
    if (m[2] != null) inline(node(parent, "strong"), m[2]);
    else if (m[4] != null) inline(node(parent, "em"), m[4]);
    else if (m[5] != null) node(parent, "code", "", m[5]);
    else if (/^https?:\/\/[^\s"<>\\]+$/i.test(m[7])) {
      const a = node(parent, "a", "", m[6]);
      a.href = m[7];
      a.target = "_blank";
      a.rel = "noopener noreferrer";
    } else parent.appendChild(document.createTextNode(m[6]));
    at = m.index + m[0].length;
  }
  if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
}

const cells = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
const isRule = (line) => /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(line);

/** `markdown` drawn into `out`. */
export function renderMarkdown(out, markdown) {
  const lines = String(markdown).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let paragraph = null;
  const end = () => { paragraph = null; };
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*```/.test(line)) {
      end();
      const code = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
      node(node(out, "pre"), "code", "", code.join("\n"));
      i++;
      continue;
    }
    if (!line.trim()) { end(); i++; continue; }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      end();
      inline(node(out, "p", "md-h" + heading[1].length), heading[2]);
      i++;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && isRule(lines[i + 1])) {
      end();
      const head = cells(line);
      const align = cells(lines[i + 1]).map((c) => (/:$/.test(c) ? "num" : ""));
      // Scrolls sideways when wide: focusable, so the keyboard can scroll it too.
      const wrap = node(out, "div", "md-table");
      wrap.tabIndex = 0;
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", head.join(" · "));
      const table = node(wrap, "table");
      const tr = node(node(table, "thead"), "tr");
      head.forEach((h, k) => { const th = node(tr, "th", align[k]); th.scope = "col"; inline(th, h); });
      const body = node(table, "tbody");
      for (i += 2; i < lines.length && lines[i].includes("|") && lines[i].trim(); i++) {
        const row = node(body, "tr");
        cells(lines[i]).slice(0, head.length).forEach((c, k) => inline(node(row, "td", align[k]), c));
      }
      continue;
    }
    const item = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      end();
      const ordered = /\d/.test(item[1]);
      const list = node(out, ordered ? "ol" : "ul");
      while (i < lines.length) {
        const m = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        inline(node(list, "li"), m[2]);
        i++;
      }
      continue;
    }
    if (paragraph) paragraph.appendChild(document.createElement("br"));
    else paragraph = node(out, "p");
    inline(paragraph, line);
    i++;
  }
}
