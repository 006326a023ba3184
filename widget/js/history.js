// Earlier conversations, loaded on demand by flow.js the first time the visitor opens the
// list (most visitors never do, so it is not part of the panel's first download,
// scripts/sizes.sh): this browser's conversations on this site, newest first, each with
// its first question, its last message and when it was last active (in the panel's
// language). The list sits under the title bar, above the log, and leaves the message box
// in view. Choosing one makes it the stored conversation and reloads the panel, which
// resumes it from history; Escape closes the list and returns focus to its button.

let panel;

// The list's look, here rather than in the panel's stylesheet (the first download);
// dark.css's rules for it are more specific and win.
const sheet = new CSSStyleSheet();
sheet.replaceSync(
  ".cw-history{flex:0 1 auto;max-height:55%;overflow-y:auto;padding:0 1rem .5rem;border-bottom:1px solid #d0d7de;background:#fff}" +
    ".cw-history h2{font-size:1rem}" +
    ".cw-item{display:block;width:100%;margin:.5rem 0;border-radius:12px;text-align:left}" +
    ".cw-item>*{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}" +
    ".cw-item small,.cw-item time{color:#57606a;font-size:.8125rem}"
);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

/** Open the list, or close it when open. `c`: the panel's words and language, the
 * stored conversation's key, the list's button, the conversations to list and the
 * element helper (flow.js). */
export function toggle(c) {
  if (panel) {
    panel.remove();
    panel = null;
  } else {
    const when = new Intl.DateTimeFormat(c.lang == "en" ? "en-GB" : "vi-VN",
      { day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit" });
    panel = c.el("div", "cw-history");
    panel.setAttribute("role", "region");
    panel.setAttribute("aria-label", c.words[4]);
    panel.append(c.el("h2", "", c.words[4]));
    for (const item of c.items) {
      const b = c.el("button", "cw-starter cw-item");
      b.type = "button";
      b.append(c.el("span", "cw-item-q", item.q));
      if (item.l && item.l != item.q) b.append(c.el("small", "", item.l));
      if (item.t) {
        const t = c.el("time", "", when.format(item.t));
        t.dateTime = new Date(item.t).toISOString();
        b.append(t);
      }
      b.onclick = () => {
        localStorage.setItem(c.key, item.id);
        sessionStorage.setItem("cw.focus", "1");
        location.hash = location.hash.replace(/&?reset=1/, "");
        location.reload();
      };
      panel.append(b);
    }
    panel.onkeydown = (e) => {
      if (e.key == "Escape") {
        e.stopPropagation();
        toggle(c);
        c.button.focus();
      }
    };
    document.querySelector(".cw-header").after(panel);
    panel.querySelector("button")?.focus();
  }
  c.button.setAttribute("aria-expanded", !!panel);
  return !!panel;
}
