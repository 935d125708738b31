// What-if on the placement page: every control change re-runs the scheduler through the API
// (debounced, nothing saved) and shows the diff, the ranking and the chart; Apply saves the spec, and its
// answer (htmx) is the new score table with the chart's figure, the selected count and the history.
(function () {
  "use strict";
  const DEBOUNCE_MS = 250;
  const form = document.getElementById("whatif-form");
  let chartData = JSON.parse(document.getElementById("chart-data").textContent);
  const chartConfig = { responsive: true, displayModeBar: false };

  function drawChart(figure) {
    // the note and the text alternative say what the bars show: which clusters, how many left out
    const note = figure.summary.charAt(0).toUpperCase() + figure.summary.slice(1);
    document.getElementById("score-chart-note").textContent = note + ". The score table lists every cluster.";
    document.getElementById("score-chart").setAttribute("aria-label",
      "Stacked bar chart of the weighted score contributions: " + figure.summary);
    if (window.Plotly) window.Plotly.react("score-chart", figure.data, figure.layout, chartConfig);
  }
  drawChart(chartData);
  if (!form) return;

  const controls = JSON.parse(document.getElementById("whatif-controls").textContent);
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const status = document.getElementById("whatif-status");
  const errors = document.getElementById("whatif-errors");
  const result = document.getElementById("whatif-result");
  const applyButton = document.getElementById("whatif-apply");
  const added = [];  // prioritizer configurations added here: {config, input}
  let timer = null;
  let lastSpec = null;
  let sequence = 0;

  function value(input) {
    return input.value === "" ? null : Number(input.value);
  }

  function ocmOverride() {
    const configurations = controls.configurations.map(function (item) {
      // the number box is the source: it keeps what was typed even beyond the slider's range
      const input = document.getElementById("weight-" + item.index + "-number");
      return Object.assign({}, item.config, { weight: value(input) });
    });
    added.forEach(function (item) {
      configurations.push(Object.assign({}, item.config, { weight: value(item.input) }));
    });
    const override = {
      prioritizerPolicy: { mode: document.getElementById("whatif-mode").value, configurations: configurations },
      numberOfClusters: value(document.getElementById("whatif-count")),
    };
    if (controls.tolerations.length) {
      override.tolerations = controls.tolerations
        .filter(function (item) { return document.getElementById("toleration-" + item.index).checked; })
        .map(function (item) { return item.toleration; });
    }
    return override;
  }

  function fleetOverride() {
    const override = {
      preferred: controls.preferred.map(function (term) {
        return { index: term.index, weight: value(document.getElementById("preferred-" + term.index + "-number")) };
      }),
    };
    const count = document.getElementById("whatif-count");
    if (count) override.numberOfClusters = value(count);
    return override;
  }

  function fillList(id, names) {
    const list = document.getElementById(id);
    list.replaceChildren();
    names.forEach(function (name) {
      const item = document.createElement("li");
      item.textContent = name;
      list.appendChild(item);
    });
    if (!names.length) {
      const item = document.createElement("li");
      item.className = "empty";
      item.textContent = "none";
      list.appendChild(item);
    }
  }

  function cell(row, text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
  }

  function showRanking(ranking) {
    const body = document.querySelector("#whatif-ranking tbody");
    body.replaceChildren();
    ranking.forEach(function (entry) {
      const row = document.createElement("tr");
      if (entry.selected) row.className = "selected";
      cell(row, String(entry.rank), "number");
      cell(row, entry.name + (entry.selected ? " (selected)" : ""), "name");
      cell(row, entry.total === null ? "" : String(entry.total), "number");
      cell(row, Object.entries(entry.contributions).map(function (pair) {
        return pair[0] + " " + pair[1];
      }).join(", "));
      body.appendChild(row);
    });
  }

  function showConditions(conditions) {
    fillList("whatif-conditions", conditions.map(function (c) {
      return c.type + " " + c.status + " " + c.reason + (c.message ? ": " + c.message : "");
    }));
  }

  function showErrors(body) {
    const messages = [];
    Object.entries(body).forEach(function (pair) {
      [].concat(pair[1]).forEach(function (message) { messages.push(pair[0] + ": " + message); });
    });
    errors.textContent = messages.join("; ");
    status.textContent = "Not evaluated: " + messages.join("; ");
  }

  function showResult(answer) {
    errors.textContent = "";
    result.hidden = false;
    fillList("diff-kept", answer.diff.kept);
    fillList("diff-added", answer.diff.added);
    fillList("diff-removed", answer.diff.removed);
    showRanking(answer.ranking);
    showConditions(answer.conditions);
    drawChart(answer.chart);
    status.textContent = answer.numberOfSelectedClusters + " clusters selected: " + answer.diff.added.length +
      " added, " + answer.diff.removed.length + " removed, " + answer.diff.kept.length + " kept.";
  }

  async function run() {
    const mine = ++sequence;
    const override = controls.kind === "Placement" ? ocmOverride() : fleetOverride();
    status.textContent = "Evaluating…";
    const response = await fetch(form.dataset.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(override),
    });
    const body = await response.json();
    if (mine !== sequence) return;  // a newer change is on its way; drop this answer
    if (response.ok) {
      lastSpec = body.spec;
      showResult(body);
    } else {
      lastSpec = null;
      showErrors(body);
    }
    if (applyButton) applyButton.disabled = lastSpec === null;
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  }

  function mirror(event) {
    const target = event.target;
    if (target.dataset.mirror) document.getElementById(target.dataset.mirror).value = target.value;
    const twin = document.getElementById(target.id + "-number");
    if (twin) twin.value = target.value;
  }

  form.addEventListener("input", function (event) {
    if (event.target.closest(".add-prioritizer")) return;
    mirror(event);
    schedule();
  });
  form.addEventListener("change", function (event) {
    // text boxes already ran on "input"; their "change" on blur (e.g. clicking Apply) must not re-run
    if (event.target.closest(".add-prioritizer") || event.target.tagName === "INPUT" &&
        event.target.type !== "checkbox") return;
    schedule();
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); run(); });

  const addType = document.getElementById("add-type");
  if (addType) {
    addType.addEventListener("change", function () {
      const addOn = addType.value === "AddOn";
      document.getElementById("add-builtin").hidden = addOn;
      document.getElementById("add-resource").hidden = !addOn;
      document.getElementById("add-score").hidden = !addOn;
    });
    document.getElementById("add-prioritizer").addEventListener("click", addPrioritizer);
  }

  function addPrioritizer() {
    const addOn = addType.value === "AddOn";
    const coordinate = addOn
      ? { type: "AddOn", addOn: {
        resourceName: document.getElementById("add-resource").value,
        scoreName: document.getElementById("add-score").value } }
      : { type: "BuiltIn", builtIn: document.getElementById("add-builtin").value };
    const label = addOn
      ? "AddOn/" + coordinate.addOn.resourceName + "/" + coordinate.addOn.scoreName : coordinate.builtIn;
    const id = "added-weight-" + added.length;
    const wrapper = document.createElement("div");
    wrapper.className = "control weight added";
    const text = document.createElement("label");
    text.htmlFor = id;
    text.textContent = label + " weight (added)";
    const range = document.createElement("input");
    Object.assign(range, { type: "range", id: id, min: -10, max: 10, step: 1, value: 1 });
    const number = document.createElement("input");
    Object.assign(number, { type: "number", id: id + "-number", min: -10, max: 10, step: 1, value: 1 });
    number.setAttribute("aria-label", label + " weight (number)");
    number.dataset.mirror = id;
    wrapper.append(text, range, number);
    document.getElementById("whatif-weights").appendChild(wrapper);
    added.push({ config: { scoreCoordinate: coordinate }, input: number });
    range.focus();
    schedule();
  }

  document.getElementById("whatif-reset").addEventListener("click", function () {
    form.reset();
    document.querySelectorAll("#whatif-weights .added").forEach(function (node) { node.remove(); });
    added.length = 0;
    lastSpec = null;
    if (applyButton) applyButton.disabled = true;
    result.hidden = true;
    errors.textContent = "";
    drawChart(chartData);
    status.textContent = "Reset to the stored spec.";
  });

  if (applyButton) {
    applyButton.addEventListener("click", function () {
      if (lastSpec === null) return;
      applyButton.disabled = true;
      errors.textContent = "";
      status.textContent = "Applying…";
      window.htmx.ajax("POST", form.dataset.applyUrl, {
        target: "#score-table",
        swap: "innerHTML",
        values: { spec: JSON.stringify(lastSpec) },
        headers: { "X-CSRFToken": csrf },
      });
    });
    document.body.addEventListener("htmx:afterSwap", function (event) {
      const target = event.detail.target;
      if (target.id === "whatif-errors") {  // refused: the reason is swapped in
        status.textContent = "Not applied: " + errors.textContent;
        applyButton.disabled = false;
        return;
      }
      const applied = document.getElementById("applied-chart");
      if (target.id !== "score-table" || !applied) return;
      // the stored spec is now the applied one: the chart and Reset go back to it
      chartData = JSON.parse(applied.textContent);
      applied.remove();
      lastSpec = null;
      result.hidden = true;
      drawChart(chartData);
      status.textContent = "Applied: the spec is saved and the placement rescheduled (" +
        document.getElementById("selected-count").textContent.trim() + " selected / requested).";
    });
  }
}());
