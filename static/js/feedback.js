// Feedback on every action: messages in #notices can be dismissed, and while an htmx request a user
// started runs, the page shows it is busy: the global indicator of base.html (html.htmx-busy, drawn by
// site.css), aria-busy on the element being replaced, and the buttons that sent it disabled so a second
// press sends nothing. Polls (hx-trigger "every ...") refresh quietly and show none of this.
(function () {
  "use strict";
  let running = 0;

  document.addEventListener("click", function (event) {
    const button = event.target.closest(".notice-dismiss");
    if (button) button.closest(".notice").remove();
  });

  function polled(elt) {
    return /\bevery\b/.test(elt.getAttribute("hx-trigger") || "");
  }

  function setBusy(busy) {
    running = Math.max(0, running + (busy ? 1 : -1));
    document.documentElement.classList.toggle("htmx-busy", running > 0);
    const indicator = document.getElementById("busy");
    if (indicator) indicator.setAttribute("aria-hidden", running > 0 ? "false" : "true");
  }

  // The enabled buttons that sent the request: a form's submit buttons, or the button itself.
  function senders(elt) {
    const buttons = elt.matches("button")
      ? [elt]
      : Array.from(elt.querySelectorAll("button[type=submit], button:not([type])"));
    return buttons.filter(function (button) { return !button.disabled; });
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    const elt = event.detail.elt;
    if (polled(elt)) return;
    const target = event.detail.target;
    const buttons = senders(elt);
    // values are collected before this event, so a disabled submitter still sends its name and value
    buttons.forEach(function (button) { button.disabled = true; });
    if (target) target.setAttribute("aria-busy", "true");
    event.detail.requestConfig.feedback = { buttons: buttons, target: target };
    setBusy(true);
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    const state = event.detail.requestConfig && event.detail.requestConfig.feedback;
    if (!state) return;
    state.buttons.forEach(function (button) { button.disabled = false; });
    if (state.target) state.target.removeAttribute("aria-busy");
    setBusy(false);
  });
}());
