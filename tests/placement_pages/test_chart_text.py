"""Text from hub objects reaches the plotly figures escaped: plotly reads `<a href>`, `<b>`, `<br>` in trace
names and category labels as markup, and shows the escaped text as the literal characters."""

from datetime import UTC, datetime, timedelta

from placement import tables
from placement.families.ocm import OCM
from placement.rollouts import tables as run_tables

LINK = '<a href="https://evil.example/">claim</a>'
ESCAPED_LINK = '&lt;a href="https://evil.example/"&gt;claim&lt;/a&gt;'
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def test_plotly_text_escapes_markup_and_ampersands_only() -> None:
    assert tables.plotly_text(LINK) == ESCAPED_LINK
    assert tables.plotly_text('a & b\'s "c"') == 'a &amp; b\'s "c"'
    assert tables.plotly_text("prod-use1-a") == "prod-use1-a"


def test_the_score_chart_escapes_prioritizer_and_cluster_names() -> None:
    prioritizer = f"AddOn/{LINK}/score"
    row = tables.ScoreRow(
        name=f"<b>{LINK}</b>",
        selected=True,
        filtered_by=None,
        scores={prioritizer: 10},
        contributions={prioritizer: 10},
        total=10,
        rank=1,
    )

    figure = tables.chart_figure(
        OCM.chart_title, OCM.chart_axis, tables.ChartPick([row], [], 0), [prioritizer]
    )

    (trace,) = figure["data"]
    assert trace["meta"] == f"AddOn/{ESCAPED_LINK}/score"
    assert trace["x"] == [f"&lt;b&gt;{ESCAPED_LINK}&lt;/b&gt;"]
    # the legend and the tick labels are cut before they are escaped: no entity is cut in half
    assert trace["name"] == tables.plotly_text(tables.short_label(prioritizer, tables.CHART_LEGEND))
    assert figure["layout"]["xaxis"]["ticktext"] == [tables.plotly_text(tables.short_label(row.name))]


def test_the_run_timeline_escapes_stage_and_cluster_names() -> None:
    began = NOW - timedelta(minutes=5)
    cluster = run_tables.ClusterRow(LINK, run_tables.UPDATING, began)
    stage = run_tables.StageRow("<br>canary", run_tables.UPDATING, began, None, (cluster,), ())

    figure = run_tables.timeline_figure([stage], NOW)

    labels = [label for trace in figure["data"] for label in trace["y"]]
    assert labels == ["stage &lt;br&gt;canary", f"&lt;br&gt;canary · {ESCAPED_LINK}"]
    assert figure["layout"]["yaxis"]["categoryarray"] == labels[::-1]
