// Concierge embed loader: one tag on the merchant's page. Puts a labelled launcher in a
// shadow root and opens the chat in an iframe served from the Worker's own origin.
(function () {
  var script = document.currentScript;
  if (!script || window.Concierge) return;
  var origin = new URL(script.src, location.href).origin;
  var key = script.getAttribute("data-site-key") || "";
  var host = document.createElement("div");
  host.setAttribute("data-concierge", "");
  var root = host.attachShadow({ mode: "open" });
  root.innerHTML =
    '<style>button{position:fixed;right:20px;bottom:20px;width:56px;height:56px;border-radius:50%;border:0;' +
    'background:#0b3d91;color:#fff;font-size:24px;cursor:pointer;z-index:2147483000}' +
    'iframe{position:fixed;right:20px;bottom:88px;width:380px;height:560px;max-height:calc(100vh - 108px);' +
    'border:1px solid #d0d7de;border-radius:12px;box-shadow:0 8px 24px rgba(0,0,0,.2);z-index:2147483000;background:#fff}' +
    "iframe[hidden]{display:none}</style>" +
    '<button type="button" aria-label="Open chat" aria-expanded="false">\u{1F4AC}</button>';
  var button = root.querySelector("button");
  var frame = null;
  function open() {
    if (!frame) {
      frame = document.createElement("iframe");
      frame.title = "Chat";
      frame.src = origin + "/chat.html#site_key=" + encodeURIComponent(key);
      root.appendChild(frame);
    }
    frame.hidden = false;
    button.setAttribute("aria-expanded", "true");
    button.setAttribute("aria-label", "Close chat");
  }
  function close() {
    if (frame) frame.hidden = true;
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-label", "Open chat");
  }
  button.addEventListener("click", function () {
    frame && !frame.hidden ? close() : open();
  });
  window.Concierge = { open: open, close: close };
  document.body.appendChild(host);
})();
