// htmx swaps only 2xx answers (and those its config names). A section that carries its own refusal (a 403
// with the reason, a 409 conflict, a 502 from the hub) lists those statuses in data-swap-statuses, e.g.
// data-swap-statuses="403 409 502"; the answer then replaces the section like a success would.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    const section = event.target.closest("[data-swap-statuses]");
    if (!section) return;
    const statuses = section.dataset.swapStatuses.split(/\s+/);
    if (statuses.includes(String(event.detail.xhr.status))) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
}());
