// The placement page's chart of the selected count over time: a plotly step line drawn from the JSON the
// page carries, and drawn again when an Apply swaps a fresh one in (htmx, out of band).
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
