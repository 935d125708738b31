// List editors (templates/_row_editor.html): while a row's operator is Exists its value is disabled, since
// Exists matches any value (a disabled input is not sent; the server ignores a value sent with Exists
// anyway, so the editor works the same without JavaScript). The editor's own template loads this file,
// also in every htmx swap of the editor, so it runs once and follows later rows by delegation.
(function () {
  "use strict";
  if (window.fleetRowEditor) return;
  window.fleetRowEditor = true;

  function follow(operator) {
    const value = operator.closest("tr").querySelector("[data-operand]");
    if (value) value.disabled = operator.value === "Exists";
  }

  function followAll(root) {
    root.querySelectorAll("select[data-operator]").forEach(follow);
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches("select[data-operator]")) follow(event.target);
  });
  document.addEventListener("htmx:load", function (event) { followAll(event.target); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { followAll(document); });
  } else {
    followAll(document);
  }
}());
