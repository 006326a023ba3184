// "When nobody is free" (issue 45): under a notice that nobody can answer now (a wait for a
// person that timed out, or outside office hours), a form to leave a phone number or e-mail
// and the question, so the site's staff call back. Loaded on demand by rich.js when such a
// notice is drawn (scripts/sizes.sh: not part of the panel's first download).
//
// Its words follow the conversation's language: the notice above it is written in it
// (Vietnamese letters in the notice, or no notice text yet: Vietnamese; else English). Labelled fields, errors announced (role="alert") and tied to the
// field (aria-describedby, aria-invalid), the result announced (role="status") and
// focused; the form sends with Enter in the contact field or its button.
//
// POST /conversations/{id}/follow-up {contact, question} with the conversation's headers
// (edge/src/routes/follow_up.rs). The Worker decides what a valid contact is; the shapes
// checked here only spare a round trip.

const WORDS = {
  vi: [
    "Để lại số điện thoại hoặc email, nhân viên sẽ liên hệ lại với bạn.",
    "Số điện thoại hoặc email",
    "Câu hỏi của bạn",
    "Gửi",
    "Vui lòng nhập số điện thoại (ví dụ 0901 234 567) hoặc địa chỉ email.",
    "Vui lòng nhập câu hỏi.",
    "Đã ghi nhận. Nhân viên sẽ liên hệ lại với bạn qua ",
    "Chưa gửi được, vui lòng thử lại.",
    "Để lại liên hệ",
  ],
  en: [
    "Leave a phone number or e-mail and our staff will get back to you.",
    "Phone number or e-mail",
    "Your question",
    "Send",
    "Please enter a phone number (e.g. +44 20 7946 0958) or an e-mail address.",
    "Please enter your question.",
    "Thank you. Our staff will get back to you at ",
    "Could not send it; please try again.",
    "Leave your contact",
  ],
};

const PHONE = /^\+?[\d\s.()-]{8,20}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]{2,}$/;

const sheet = new CSSStyleSheet();
// The comment box's rules too (also feedback.js's): not in the panel's first download.
sheet.replaceSync(
  ".cw-send-comment{min-height:44px;padding:0 .75rem;border:1px solid #d0d7de;border-radius:8px;background:#fff;color:#1f2328}" +
    ".cw-comment{flex:1 1 100%;padding:.5rem;border:1px solid #6e7781;border-radius:8px;font:inherit;resize:vertical}" +
    ".cw-contact{display:flex;flex-direction:column;gap:.5rem;margin-top:.5rem;padding:.75rem;border:1px solid #d0d7de;border-radius:8px}" +
    ".cw-contact p{margin:0}.cw-contact label{display:flex;flex-direction:column;gap:.25rem;font-size:.9375rem}" +
    ".cw-contact .cw-comment{flex:none;min-height:44px}.cw-contact .cw-send-comment{align-self:flex-start}" +
    "[data-theme=dark] .cw-contact{border-color:#3d444d}"
);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

let count = 0;

/** The form into `out` (`state` keeps what was sent across redraws); `session`: the
 * conversation and its API headers (rich.js). */
export function form(out, state, session) {
  const notice = out.closest(".cw-msg")?.querySelector(".cw-body")?.textContent || "";
  const w = WORDS[!notice || /[à-ỹđ]/i.test(notice) ? "vi" : "en"];
  const n = ++count;
  const el = (parent, tag, cls, text) => {
    const e = parent.appendChild(document.createElement(tag));
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  };
  const box = el(out, "form", "cw-contact");
  box.setAttribute("aria-label", w[8]);
  box.noValidate = true;
  if (state.sent) {
    const done = el(box, "p", "cw-note", w[6] + state.sent + ".");
    done.setAttribute("role", "status");
    done.tabIndex = -1;
    return;
  }
  el(box, "p", "", w[0]);
  const field = (label, tag, name) => {
    const l = el(box, "label", "", label);
    const f = el(l, tag, "cw-comment");
    f.name = name;
    f.id = `cw-${name}-${n}`;
    f.required = true;
    return f;
  };
  const contact = field(w[1], "input", "contact");
  contact.type = "text";
  contact.autocomplete = "tel";
  contact.inputMode = "tel";
  contact.maxLength = 254;
  contact.value = state.contact || "";
  const question = field(w[2], "textarea", "question");
  question.rows = 2;
  question.maxLength = 1000;
  question.value = state.question || "";
  const error = el(box, "p", "cw-error");
  error.id = `cw-contact-error-${n}`;
  error.setAttribute("role", "alert");
  error.hidden = true;
  // Sent by the button or Enter in the contact field, not by a form submission (the
  // panel's CSP has form-action 'none').
  const send = el(box, "button", "cw-send-comment", w[3]);
  send.type = "button";
  const fail = (text, target) => {
    error.textContent = text;
    error.hidden = false;
    for (const f of [contact, question]) {
      const bad = f === target;
      f.toggleAttribute("aria-invalid", bad);
      if (bad) f.setAttribute("aria-describedby", error.id);
      else f.removeAttribute("aria-describedby");
    }
    target?.focus();
  };
  contact.onkeydown = (event) => {
    if (event.key == "Enter") {
      event.preventDefault();
      submit();
    }
  };
  send.onclick = () => submit();
  const submit = async () => {
    state.contact = contact.value.trim();
    state.question = question.value.trim();
    if (!PHONE.test(state.contact) && !EMAIL.test(state.contact)) return fail(w[4], contact);
    if (!state.question) return fail(w[5], question);
    send.disabled = true;
    const s = session;
    const headers = { "content-type": "application/json", "x-api-key": s.key, "x-embedder-origin": s.embedder };
    if (s.token) headers["x-user-token"] = s.token;
    try {
      const response = await fetch(`/conversations/${encodeURIComponent(s.id)}/follow-up`, {
        method: "POST",
        headers,
        body: JSON.stringify({ contact: state.contact, question: state.question }),
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        state.sent = body.follow_up.contact;
        box.remove();
        form(out, state, session);
        out.querySelector("[role=status]").focus();
        return;
      }
      send.disabled = false;
      const code = body.error && body.error.code;
      fail(code == "invalid_contact" ? w[4] : w[7], code == "invalid_contact" ? contact : null);
    } catch (_) {
      send.disabled = false;
      fail(w[7], null);
    }
  };
}
