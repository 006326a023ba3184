// The panel's conveniences around the conversation, in plain JS that watches the panel's
// DOM (widget/src/flow.rs starts it; plain JS keeps the widget inside its download budget,
// scripts/sizes.sh):
// - the colour scheme: `data-theme` on <html>, "light" or "dark", from the loader's
//   `theme` ("light", "dark", or "auto"/absent: the visitor's prefers-color-scheme), and
//   the dark stylesheet (www/widget/dark.css) added only when dark;
// - the newest message in view: when a message of the visitor's appears, the log jumps to
//   the bottom; while the visitor reads further up, new text shows a "new messages ↓" pill
//   that jumps down;
// - the length limit: a counter from WARN_AT characters, and over LIMIT (the Worker's
//   limit; the panel then sends nothing, widget/src/chat.rs) a message saying so;
// - earlier conversations: this browser's conversations on this site (ids, first
//   questions, last messages and when, in localStorage), listed behind a header button by
//   history.js (loaded on demand); choosing one makes it the stored conversation and
//   reloads the panel, which resumes it from history;
// - "talk to a person" (a labelled button above the message box, so the title keeps its
//   room on a phone), when the site turns handoff on: it sends the visitor's request as a
//   message through the message box.

const LIMIT = 4000;
const WARN_AT = 3500;
const KEEP = 20;

// [pill, counter unit, over the limit (before, after the limit), earlier conversations,
//  handoff button, handoff request] (widget/src/i18n/)
let words;
let numbers;
let key; // the panel's stored conversation id (widget/src/options.rs)
let list; // this browser's conversations on the site
let current;
let lang;
const $ = (selector) => document.querySelector(selector);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  e.className = cls || "";
  e.textContent = text || "";
  return e;
};
const length = (text) => [...text.trim()].length;

/** Start once the panel is mounted: its words and language, the site's key, whether the
 * site turns handoff on. */
export function setup(panelWords, code, siteKey, handoff) {
  words = panelWords;
  lang = code;
  numbers = new Intl.NumberFormat(code == "en" ? "en-US" : "vi-VN");
  key = "concierge.conversation." + siteKey;
  list = "concierge.conversations." + siteKey;
  const wanted = new URLSearchParams(location.hash.slice(1)).get("theme");
  const dark = matchMedia("(prefers-color-scheme: dark)");
  const theme = () => {
    const on = /^(dark|light)$/.test(wanted) ? wanted == "dark" : dark.matches;
    document.documentElement.dataset.theme = on ? "dark" : "light";
    if (on && !$("[href$='dark.css']")) {
      const link = el("link");
      link.rel = "stylesheet";
      link.href = "/widget/dark.css";
      document.head.append(link);
    }
  };
  theme();
  dark.onchange = theme;
  setTimeout(() => start(handoff));
}

function start(handoff) {
  const log = $(".cw-log");
  const input = $("#cw-input");
  const head = $(".cw-new");
  // The pill, under the log.
  const pill = el("button", "cw-pill", words[0]);
  const bottom = () => {
    log.scrollTop = 0;
    pill.hidden = true;
  };
  pill.hidden = true;
  pill.onclick = () => {
    bottom();
    input.focus();
  };
  const box = el("div", "cw-pillbox");
  box.append(pill);
  log.after(box);
  // column-reverse: scrollTop 0 is the bottom, negative above it.
  const away = () => log.scrollTop < -48;
  log.addEventListener("scroll", () => away() || (pill.hidden = true));
  new MutationObserver((changes) => {
    const sent = changes.some((c) => [...c.addedNodes].some((n) => n.classList?.contains("cw-user")));
    if (sent) {
      bottom();
      setTimeout(count, 50); // the box is emptied after the message appears
    } else if (away()) pill.hidden = false;
    remember();
  }).observe(log.firstElementChild, { childList: true, subtree: true, characterData: true });
  // The counter, above the message box.
  const counter = el("p", "cw-count");
  counter.id = "cw-count";
  counter.setAttribute("aria-live", "polite");
  counter.hidden = true;
  $(".cw-composer").before(counter);
  input.setAttribute("aria-describedby", "cw-hint cw-count");
  const count = () => {
    const n = length(input.value);
    const over = n > LIMIT;
    const max = numbers.format(LIMIT);
    const of = numbers.format(n) + " / " + max;
    counter.hidden = n < WARN_AT;
    counter.className = over ? "cw-count cw-over" : "cw-count";
    counter.textContent = over ? words[2] + max + words[3] + " (" + of + ")" : of + " " + words[1];
    if (over) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  };
  input.addEventListener("input", count);
  // Earlier conversations, in the header before "new conversation".
  const button = (cls, label, d, onclick) => {
    const b = el("button", "cw-icon " + cls);
    b.setAttribute("aria-label", label);
    b.innerHTML = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="' + d + '"/></svg>';
    b.onclick = onclick;
    head.before(b);
    return b;
  };
  const earlier = button("cw-earlier", words[4], "M3 12a9 9 0 1 0 3-6.7L3 8M3 3v5h5M12 7v5l3 2", toggle);
  earlier.setAttribute("aria-expanded", false);
  // "Talk to a person": labelled, above the message box (the title keeps the header).
  if (handoff) {
    const person = el("button", "cw-handoff");
    person.innerHTML = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0"/></svg>';
    person.append(words[5]);
    person.onclick = () => {
      if ($(".cw-stop")) return; // an answer is streaming
      input.value = words[6];
      input.dispatchEvent(new Event("input", { bubbles: true }));
      $(".cw-send").click();
    };
    $(".cw-composer").before(person);
  }
  // The list itself is drawn by history.js, loaded the first time it is opened.
  let opened = false;
  let drawer;
  function toggle() {
    drawer ||= import(new URL("history.js", import.meta.url).href);
    drawer.then((m) => {
      opened = m.toggle({ words, lang, key, button: earlier, items: others(), el });
    }, () => (drawer = null));
  }
  const read = () => {
    try {
      return JSON.parse(localStorage.getItem(list)) || [];
    } catch (_) {
      return [];
    }
  };
  const others = () => read().filter((i) => i.id != current && i.q);
  // Keep the conversation on screen at the top of the list, named by its first question,
  // with its last finished message and when that came (`t`, ms).
  function remember() {
    const id = localStorage.getItem(key);
    const first = $(".cw-user .cw-body");
    const msgs = document.querySelectorAll(".cw-msg:not([data-state=waiting]):not([data-state=streaming]) .cw-body");
    const last = first && msgs.length && msgs[msgs.length - 1].textContent.slice(0, 120);
    if (!id) return;
    const items = read();
    const item = items.find((i) => i.id == id) || { id };
    if (id != current || (!item.q && first) || (last && last != item.l)) {
      if (opened && id != current) toggle();
      current = id;
      item.q = item.q || (first && first.textContent.slice(0, 120));
      if (last && last != item.l) {
        item.l = last;
        item.t = Date.now();
      }
      try {
        localStorage.setItem(list, JSON.stringify([item, ...items.filter((i) => i.id != id)].slice(0, KEEP)));
      } catch (_) {}
    }
    earlier.hidden = !others().length;
  }
  remember();
  if (sessionStorage.getItem("cw.focus")) {
    sessionStorage.removeItem("cw.focus");
    input.focus();
  }
}
