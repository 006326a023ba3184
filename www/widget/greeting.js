// Concierge's proactive greeting bubble, beside the launcher: loaded by embed.js only when
// its tag has data-greeting="…" (the loader stays in its 3 KB budget without it).
//
// Shown once per visit (sessionStorage), 0.8 s after the page loads, unless the panel is
// already open. Pressing the greeting opens the panel; its × dismisses it; opening the
// panel any other way removes it too. Plain JS in its own shadow root, styles as a
// constructable stylesheet: a strict CSP needs nothing more than the loader does.
(function () {
  var tag = document.querySelector('script[src*="/embed.js"][data-site-key]');
  var attr = function (name) {
    return ((tag && tag.getAttribute("data-" + name)) || "").trim();
  };
  var text = attr("greeting").slice(0, 200);
  var seen = "concierge.greeted";
  try {
    if (!text || sessionStorage.getItem(seen)) return;
  } catch (e) {
    return;
  }
  var en = /^en/i.test(attr("lang") || document.documentElement.lang);
  var side = /left/i.test(attr("position")) ? "left" : "right";
  var css =
    ":host{all:initial}" +
    "div{position:fixed;bottom:88px;" + side + ":20px;max-width:min(280px,calc(100% - 40px));" +
    "display:flex;align-items:flex-start;gap:2px;padding:4px;border-radius:12px;background:#fff;" +
    "box-shadow:0 4px 18px rgba(0,0,0,.25);z-index:2147483000;font:15px/1.45 system-ui,sans-serif}" +
    "button{min-height:44px;border:0;border-radius:8px;background:#fff;color:#1f2328;font:inherit;" +
    "cursor:pointer;text-align:left;padding:8px 10px}" +
    "button+button{min-width:44px;padding:0;text-align:center;font-size:20px;color:#57606a}" +
    "button:hover{background:#f0f3f6}" +
    "button:focus-visible{outline:3px solid #0b3d91;outline-offset:-3px}";
  var host = document.createElement("div");
  host.setAttribute("data-concierge-greeting", "");
  var root = host.attachShadow({ mode: "open" });
  if (root.adoptedStyleSheets && window.CSSStyleSheet && CSSStyleSheet.prototype.replaceSync) {
    var sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } else {
    root.appendChild(document.createElement("style")).textContent = css;
  }

  function done() {
    host.remove();
    window.removeEventListener("concierge:opened", done);
    try {
      sessionStorage.setItem(seen, "1");
    } catch (e) {}
  }

  setTimeout(function () {
    var api = window.Concierge;
    if (!api || api.isOpen()) return;
    var bubble = document.createElement("div");
    bubble.className = "bubble";
    var say = document.createElement("button");
    say.type = "button";
    say.textContent = text;
    say.onclick = function () {
      done();
      api.open();
    };
    var dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.textContent = "×";
    dismiss.setAttribute("aria-label", en ? "Dismiss the greeting" : "Ẩn lời chào");
    dismiss.onclick = done;
    bubble.append(say, dismiss);
    root.appendChild(bubble);
    document.body.appendChild(host);
    window.addEventListener("concierge:opened", done);
  }, 800);
})();
