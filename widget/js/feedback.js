// Feedback on an answer, loaded on demand by rich.js on the visitor's first vote or comment
// (most visitors never vote, so it is not part of the panel's first download,
// scripts/sizes.sh): storing a vote (and comment) through the API, and the comment box,
// shown only when the visitor asks for it. `c`: what rich.js shares (its turns and views,
// the conversation's API headers, its footer and element helpers, the panel's words).

// The comment box's look (also contact.js's), here rather than in the panel's stylesheet
// (the first download); dark.css's rules for it are more specific and win.
const sheet = new CSSStyleSheet();
sheet.replaceSync(
  ".cw-send-comment{min-height:44px;padding:0 .75rem;border:1px solid #d0d7de;border-radius:8px;background:#fff;color:#1f2328}" +
    ".cw-comment{flex:1 1 100%;padding:.5rem;border:1px solid #6e7781;border-radius:8px;font:inherit;resize:vertical}"
);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

/** Store the visitor's vote (and comment) through the API; show it once stored. */
export async function vote(c, key, rating, comment) {
  const turn = c.turns.get(key);
  const s = c.session;
  const headers = { "content-type": "application/json", "x-api-key": s.key, "x-embedder-origin": s.embedder };
  if (s.token) headers["x-user-token"] = s.token;
  const path = `/conversations/${encodeURIComponent(s.id)}/messages/${encodeURIComponent(turn.id)}/feedback`;
  try {
    const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(comment == null ? { rating } : { rating, comment }) });
    if (!response.ok) return;
    turn.feedback = (await response.json()).feedback;
    turn.thanked = comment != null;
    turn.asking = false;
    c.footer(key);
    // The row is drawn anew: keyboard focus goes back to the vote.
    c.views.get(key)[2].querySelector(`.cw-${rating}`)?.focus();
  } catch (_) {
    // Offline: the vote is not shown as stored.
  }
}

/** The comment box (with the comment stored before) and its send button, in `foot`. */
export function comment(c, key, foot) {
  if (foot.querySelector(".cw-comment")) return;
  const turn = c.turns.get(key);
  const box = c.el(foot, "textarea", "cw-comment");
  box.rows = 2;
  box.maxLength = 1000;
  box.setAttribute("aria-label", c.words[17]);
  box.placeholder = c.words[17];
  box.value = (turn.feedback && turn.feedback.comment) || "";
  c.button(foot, "cw-send-comment", c.words[18]).onclick = () => vote(c, key, turn.feedback.rating, box.value);
  box.focus();
}
