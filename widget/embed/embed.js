// Concierge embed loader — the one tag a merchant pastes:
//
//   <script src="https://<worker>/embed.js" data-site-key="pk_..." async></script>
//
// Options (all optional, as data attributes on the tag):
//   data-position  "right" (default) or "left"
//   data-color     primary colour, "#rgb" or "#rrggbb" (text on it is made readable)
//   data-title     panel title (default: the site's, else "Trợ lý ảo"/"Assistant")
//   data-lang      "vi" or "en" (default: the site's language)
//   data-open      "true": open the panel when the page loads (focus is not moved)
//   data-inline    CSS selector of an element to put the panel into, always open, no launcher
//   data-user-token  a signed user token from the merchant's backend (the visitor's identity;
//                  passed to the panel in the URL fragment, never in a query string)
//   data-theme     "light", "dark", or "auto" (default: the visitor's prefers-color-scheme)
//   data-greeting  a short proactive greeting in a bubble by the launcher (once per visit;
//                  pressing it opens the panel, its × dismisses it; www/widget/greeting.js)
//
// Host-page API, on window.Concierge once loaded (the `concierge:ready` window event says
// when): open(), close(), toggle(), reset() (new conversation), identify(token) (speak for
// the user of a signed user token from now on, in a new conversation; "" or null: anonymous),
// isOpen(), and events
// on(name, fn) / off(name, fn) for "opened", "closed", "message" ({role, content, kind}),
// also dispatched on window as `concierge:opened`, `concierge:closed`, `concierge:message`.
// The launcher shows an unread badge when an answer completes while the panel is closed.
// When the panel cannot load (the key is unknown or was rotated, this page's origin is not
// allowed, the Worker cannot be reached), a card in the panel's place (light or dark, as
// the panel would be) says so to the visitor, with "Thử lại" to load it again (popup
// panels), and a console warning names the cause for the merchant. The loader asks the
// Worker with a script beside the panel, GET /widget/check?site_key=&origin= (a script,
// not fetch: a strict CSP's script-src <worker> already allows it), which warns and calls
// back only on a problem; a script that does not load means the Worker is unreachable.
//
// Plain JS, no wasm, no inline <style> (constructable stylesheets), so a strict CSP on
// the merchant's page needs only `script-src <worker>` and `frame-src <worker>`. The
// launcher lives in a shadow root and the panel in an iframe served by the Worker, so
// page styles cannot leak in. The build minifies this file into www/embed.js.
(function () {
  // currentScript is null only in unusual loaders (some tag managers): find the tag then.
  var script = document.currentScript || document.querySelector('script[src*="/embed.js"][data-site-key]');
  if (!script || window.Concierge) return;
  var origin = new URL(script.src, location.href).origin;
  var data = function (name) {
    return (script.getAttribute("data-" + name) || "").trim();
  };
  var lang = data("lang");
  var en = /^en/i.test(lang || document.documentElement.lang);
  var color = data("color");
  if (!/^#([0-9a-f]{3}){1,2}$/i.test(color)) color = "";
  var primary = color || "#0b3d91";
  var side = /left/i.test(data("position")) ? "left" : "right";
  var openOnLoad = /^(1|true|yes)$/i.test(data("open"));
  var handlers = {};
  var userToken = data("user-token");
  var frame, root, button, inline, ready, wantFocus, isOpen, resetFirst, resetPending, identifyPending, card;
  var label = en ? "Chat with us" : "Trò chuyện với chúng tôi";

  // WCAG relative luminance of "#rgb"/"#rrggbb": white text when it reaches 4.5:1.
  function luminance(hex) {
    if (hex.length < 5) hex = hex.replace(/\w/g, "$&$&");
    return [0.2126, 0.7152, 0.0722].reduce(function (sum, weight, i) {
      var c = parseInt(hex.substr(1 + 2 * i, 2), 16) / 255;
      return sum + weight * (c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4));
    }, 0);
  }
  var onPrimary = 1.05 / (luminance(primary) + 0.05) >= 4.5 ? "#fff" : "#000";

  var css =
    ":host{all:initial}" +
    ".l{position:fixed;bottom:20px;" + side + ":20px;width:56px;height:56px;padding:0;" +
    "border:0;border-radius:50%;background:" + primary + ";color:" + onPrimary + ";cursor:pointer;" +
    "z-index:2147483000;box-shadow:0 4px 14px rgba(0,0,0,.3);display:grid;place-items:center}" +
    ".l:focus-visible{outline:0;box-shadow:0 0 0 3px #fff,0 0 0 6px #1f2328}" +
    ".unread::after{content:'';position:absolute;top:2px;right:2px;width:14px;height:14px;" +
    "border-radius:50%;background:#d1242f;border:2px solid #fff}" +
    "svg{width:28px;height:28px;fill:none;stroke:currentColor;stroke-width:2;" +
    "stroke-linecap:round;stroke-linejoin:round}" +
    "iframe,div{position:fixed;bottom:88px;" + side + ":20px;width:384px;height:600px;" +
    "max-width:calc(100% - 40px);max-height:calc(100% - 108px);border:0;border-radius:12px;" +
    "box-shadow:0 8px 32px rgba(0,0,0,.28);z-index:2147483001;background:#fff;color-scheme:normal}" +
    "[hidden]{display:none}" +
    // The card: light or dark as the tag's data-theme says, else as the visitor's scheme.
    "div{box-sizing:border-box;height:auto;padding:24px;font:16px/1.5 sans-serif;" +
    "color-scheme:light dark;background:Canvas;color:CanvasText}.dark{color-scheme:dark}.light{color-scheme:light}" +
    "div button{display:block;margin-top:16px;padding:8px 20px;font:inherit}" +
    "@media (max-width:480px){iframe{top:0;left:0;bottom:auto;width:100%;height:100%;" +
    "max-width:none;max-height:none;border-radius:0}}" +
    ".inline{position:static;width:100%;height:100%;min-height:480px;max-width:none;" +
    "max-height:none;border:1px solid #d0d7de;box-shadow:none}";
  // The launcher's state: expanded or not, its icon (a chevron or a chat bubble) to match.
  function expanded(on) {
    button.setAttribute("aria-expanded", on);
    button.innerHTML =
      '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="' +
      (on ? "M6 9l6 6 6-6" : "M21 12a8 8 0 0 1-11.6 7.1L4 20.5l1.4-4.9A8 8 0 1 1 21 12z") +
      '"/></svg>';
  }

  function emit(name, detail) {
    (handlers[name] || []).slice().forEach(function (fn) {
      try {
        fn(detail);
      } catch (err) {
        setTimeout(function () {
          throw err;
        });
      }
    });
    window.dispatchEvent(new CustomEvent("concierge:" + name, { detail: detail }));
  }

  function post(command, token) {
    frame.contentWindow.postMessage({ concierge: command, token: token }, origin);
  }

  function createFrame() {
    if (frame) return;
    var enc = encodeURIComponent;
    var fragment =
      "origin=" + enc(location.origin) +
      (lang ? "&lang=" + enc(lang) : "") +
      (data("title") ? "&title=" + enc(data("title")) : "") +
      (color ? "&color=" + enc(color) : "") +
      (inline ? "&mode=inline" : "") +
      (resetFirst ? "&reset=1" : "") +
      (userToken ? "&token=" + enc(userToken) : "") +
      (data("theme") ? "&theme=" + enc(data("theme")) : "");
    frame = document.createElement("iframe");
    frame.id = "concierge-panel";
    frame.title = en ? "Chat window" : "Khung trò chuyện";
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox");
    frame.allow = "clipboard-write"; // the panel's "copy" button
    frame.hidden = !inline;
    if (inline) frame.className = "inline";
    // The Worker serves the panel for the key in the query, framable only by the site's
    // allowed origins; the other options stay in the fragment, which is never sent.
    // The page (path and query, no fragment) goes in the query too: the panel's requests
    // name it in their Referer, so the Worker knows the page a visitor asks for a person
    // from (edge/src/routes/follow_up.rs), the panel spending no byte on it. Only an
    // http(s) page can frame the panel (the site's allowed origins).
    frame.src =
      origin + "/chat?site_key=" + enc(data("site-key")) +
      "&page=" + enc((location.pathname + location.search).slice(0, 300)) +
      "#" + fragment;
    root.appendChild(frame);
    window.__conciergeFailed = fail;
    load("/widget/check?site_key=" + enc(data("site-key")) + "&origin=" + enc(location.origin)).onerror = function () {
      console.warn("Concierge: cannot reach " + origin);
      fail();
    };
  }

  // A script from the Worker (a strict CSP's script-src <worker> allows it).
  function load(path) {
    var tag = document.createElement("script");
    tag.src = origin + path;
    return document.head.appendChild(tag);
  }

  // The panel cannot load: a card in its place, in the launcher's panel (the cause is in
  // the console, for the merchant).
  function fail() {
    if (!frame) return;
    frame.remove();
    frame = ready = null;
    card = document.createElement("div");
    card.id = "concierge-panel"; // the launcher's aria-controls
    card.setAttribute("role", "alert");
    card.className = (inline ? "card inline " : "card ") + data("theme");
    card.hidden = !isOpen;
    card.textContent = en
      ? "Chat is unavailable."
      : "Trợ lý tạm thời không khả dụng.";
    // Try again in place (a popup panel; an inline one tries again with the page).
    if (!inline) {
      card.appendChild(document.createElement("button")).textContent = en ? "Try again" : "Thử lại";
      card.onclick = function (event) {
        if (event.target != card) {
          isOpen = false;
          open();
        }
      };
    }
    root.appendChild(card);
  }

  function focusPanel() {
    if (ready && wantFocus && isOpen) {
      wantFocus = false;
      frame.focus();
      post("focus");
    }
  }

  // Full screen on phones: follow the on-screen keyboard (the visual viewport), so the
  // message box stays above it.
  var viewport = window.visualViewport;
  var phone = window.matchMedia("(max-width:480px)");
  function fit() {
    if (!frame || inline) return;
    var full = isOpen && phone.matches && viewport;
    frame.style.height = full ? viewport.height + "px" : "";
    frame.style.top = full ? viewport.offsetTop + "px" : "";
  }

  // The unread badge: an answer completed while the panel was closed (in the launcher's
  // name too, for screen readers).
  function unread(on) {
    button.classList.toggle("unread", on);
    button.setAttribute("aria-label", on ? label + (en ? " (new reply)" : " (có trả lời mới)") : label);
  }

  function open(focus) {
    if (inline || isOpen) return;
    if (card) card.remove(); // try again
    card = null;
    createFrame();
    unread(false);
    isOpen = true;
    frame.hidden = false;
    expanded(true);
    fit();
    wantFocus = focus !== false;
    focusPanel();
    emit("opened");
  }

  function close(returnFocus) {
    if (inline || !isOpen) return;
    returnFocus = returnFocus === true || root.activeElement === frame;
    isOpen = false;
    (card || frame).hidden = true;
    expanded(false);
    fit();
    if (returnFocus) button.focus();
    emit("closed");
  }

  function reset() {
    if (!frame) resetFirst = true;
    else if (ready) post("reset");
    else resetPending = true;
  }

  function identify(token) {
    userToken = token ? String(token).trim() : "";
    // Before the panel exists, its URL fragment carries the token.
    if (!frame) return;
    if (ready) post("identify", userToken);
    else identifyPending = true;
  }

  function start() {
    var target = data("inline") && document.querySelector(data("inline"));
    var host = document.createElement("div");
    host.setAttribute("data-concierge", "");
    root = host.attachShadow({ mode: "open" });
    // Constructable stylesheets come with adoptedStyleSheets in every browser.
    if (root.adoptedStyleSheets) {
      var sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
      root.adoptedStyleSheets = [sheet];
    } else {
      root.appendChild(document.createElement("style")).textContent = css;
    }
    if (target) {
      inline = true;
      isOpen = true;
      createFrame();
    } else {
      button = document.createElement("button");
      button.className = "l";
      button.type = "button";
      button.setAttribute("aria-label", label);
      button.setAttribute("aria-controls", "concierge-panel");
      expanded(false);
      button.addEventListener("click", function () {
        isOpen ? close() : open();
      });
      root.appendChild(button);
      root.addEventListener("keydown", function (event) {
        if (event.key === "Escape" && isOpen) close(true);
      });
      // The proactive greeting bubble: drawn by its own script (www/widget/greeting.js),
      // loaded only when the tag asks for one.
      if (data("greeting")) load("/widget/greeting.js");
    }
    (target || document.body).appendChild(host);

    window.addEventListener("message", function (event) {
      if (!frame || event.source !== frame.contentWindow || event.origin !== origin) return;
      var message = event.data || {};
      if (message.concierge === "ready") {
        ready = true;
        if (resetPending) post("reset");
        if (identifyPending) post("identify", userToken);
        resetPending = identifyPending = false;
        focusPanel();
      } else if (message.concierge === "close") {
        close(true);
      } else if (message.concierge === "message") {
        if (message.role === "assistant" && !isOpen && button) unread(true);
        emit("message", { role: message.role, content: message.content, kind: message.kind || null });
      }
    });
    if (viewport) {
      viewport.addEventListener("resize", fit);
      viewport.addEventListener("scroll", fit);
    }

    window.Concierge = {
      open: function () {
        open();
      },
      close: function () {
        close();
      },
      toggle: function () {
        isOpen ? close() : open();
      },
      reset: reset,
      identify: identify,
      isOpen: function () {
        return !!isOpen;
      },
      on: function (name, fn) {
        (handlers[name] = handlers[name] || []).push(fn);
        return this;
      },
      off: function (name, fn) {
        handlers[name] = (handlers[name] || []).filter(function (h) {
          return h !== fn;
        });
        return this;
      },
    };
    if (openOnLoad) open(false);
    window.dispatchEvent(new CustomEvent("concierge:ready"));
  }

  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
