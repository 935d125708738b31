// The run page's timeline: a plotly Gantt chart of stages and clusters, drawn from the JSON the page
// carries and drawn again whenever htmx swaps in a fresh page body (the page polls while the run moves).
(function () {
  "use strict";
  const config = { responsive: true, displayModeBar: false };

  function draw() {
    const holder = document.getElementById("run-timeline");
    const data = document.getElementById("timeline-data");
    if (!holder || !data || !window.Plotly) return;
    const figure = JSON.parse(data.textContent);
    if (figure) window.Plotly.react(holder, figure.data, figure.layout, config);
  }

  window.addEventListener("load", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
