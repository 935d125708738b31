// What-if on the placement page: every control change re-runs the scheduler through the API
// (debounced, nothing saved) and shows the diff, the ranking and the chart; Apply saves the spec.
(function () {
  "use strict";
  const DEBOUNCE_MS = 250;
  const form = document.getElementById("whatif-form");
  const chartData = JSON.parse(document.getElementById("chart-data").textContent);
  const chartConfig = { responsive: true, displayModeBar: false };

  function drawChart(figure) {
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

  function showHistory(changes) {
    const list = document.getElementById("history");
    list.replaceChildren();
    changes.forEach(function (change) {
      const item = document.createElement("li");
      const time = document.createElement("time");
      time.dateTime = change.at;
      time.textContent = change.at.replace("T", " ").slice(0, 19);
      const trigger = document.createElement("strong");
      trigger.className = "trigger";
      trigger.textContent = change.trigger;
      item.append(time, " ", trigger);
      if (change.actor) item.append(" by " + change.actor);
      if (change.added.length) item.append(" + " + change.added.join(", "));
      if (change.removed.length) item.append(" − " + change.removed.join(", "));
      list.appendChild(item);
    });
  }

  if (applyButton) {
    applyButton.addEventListener("click", async function () {
      if (lastSpec === null) return;
      applyButton.disabled = true;
      status.textContent = "Applying…";
      const response = await fetch(form.dataset.applyUrl, {
        method: "PATCH",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
        credentials: "same-origin",
        body: JSON.stringify({ spec: lastSpec }),
      });
      const body = await response.json();
      if (!response.ok) {
        showErrors(body);
        applyButton.disabled = false;
        return;
      }
      const history = await (await fetch(form.dataset.historyUrl, { credentials: "same-origin" })).json();
      showHistory(history.results);
      status.textContent = "Applied: the spec is saved and the placement rescheduled (" +
        body.selected_count + " selected).";
    });
  }
}());
