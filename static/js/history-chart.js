// The History tab's chart of the selected count over time: a plotly step line drawn from the JSON the
// page carries, also when htmx swaps the tab's body in.
(function () {
  "use strict";
  const config = { responsive: true, displayModeBar: false };

  function draw() {
    const holder = document.getElementById("history-chart");
    const data = document.getElementById("history-chart-data");
    if (!holder || !data || !window.Plotly || holder.data) return;
    const figure = JSON.parse(data.textContent);
    window.Plotly.react(holder, figure.data, figure.layout, config);
  }

  window.addEventListener("load", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
