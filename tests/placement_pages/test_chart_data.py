"""The score chart's data: at 10,000 scored clusters it draws the best selected clusters and the best of the
rest, says how many it leaves out, and lays its legend out clear of the cut cluster names."""

import random

import pytest

from placement import explanations, tables, whatif
from placement.families import ocm

CLUSTERS = 10_000
FILTERED = 500


def shuffled_explanation() -> dict:
    """10,000 clusters in no particular order: every seventh rank selected, the last ranks unscored
    (filtered out), and names as long as real fleets give them."""
    order = list(range(CLUSTERS))
    random.Random(7).shuffle(order)
    clusters = []
    for rank in order:
        scored = rank < CLUSTERS - FILTERED
        clusters.append(
            {
                "name": f"prod-europe-west-datacenter-{rank:05d}",
                "selected": scored and rank % 7 == 0,
                "filteredBy": None if scored else "predicate: ClusterSet",
                "rank": rank + 1 if scored else None,
                "total": CLUSTERS - rank if scored else None,
                "scores": {"Balance": CLUSTERS - rank, "Steady": 0} if scored else {},
            }
        )
    return {
        "kind": "Placement",
        "selected": [c["name"] for c in clusters if c["selected"]],
        "weights": {"Balance": 1, "Steady": 1},
        "clusters": clusters,
        "conditions": [],
    }


@pytest.fixture(scope="module")
def figure() -> dict:
    explanation = shuffled_explanation()
    table = ocm.OCM.score_table(explanation, explanations.record_of(explanation))
    return tables.chart_figure(
        ocm.OCM.chart_title, ocm.OCM.chart_axis, table.chart_pick(), ["Balance", "Steady"]
    )


def test_at_10000_clusters_the_chart_draws_30_selected_then_the_best_10_others(figure: dict) -> None:
    names = figure["data"][0]["x"]
    assert len(names) == tables.CHART_SELECTED + tables.CHART_OTHERS == 40
    ranks = [int(name.rsplit("-", 1)[1]) for name in names]
    # the 30 best selected ranks (every seventh), then the 10 best not selected, each by rank
    assert ranks[:30] == [7 * i for i in range(30)]
    assert ranks[30:] == [1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
    assert figure["data"][0]["customdata"] == ["selected"] * 30 + ["not selected"] * 10
    assert all(len(trace["y"]) == 40 for trace in figure["data"])


def test_the_chart_says_how_many_scored_clusters_it_leaves_out(figure: dict) -> None:
    scored = CLUSTERS - FILTERED
    assert (
        figure["summary"]
        == f"30 selected clusters and the best 10 not selected; {scored - 40:,} more not shown"
    )
    assert "9,460 more not shown" in figure["layout"]["title"]["text"]
    # a dotted line parts the selected clusters from the others
    (line,) = figure["layout"]["shapes"]
    assert line["x0"] == line["x1"] == 29.5


def test_long_names_are_cut_on_the_axis_and_whole_in_the_hover(figure: dict) -> None:
    xaxis = figure["layout"]["xaxis"]
    assert xaxis["tickvals"] == figure["data"][0]["x"]
    assert all(len(text) == tables.CHART_LABEL and "…" in text for text in xaxis["ticktext"])
    assert xaxis["ticktext"][0] == "prod-europe…center-00000"
    assert "%{x}" in figure["data"][0]["hovertemplate"]
    # the legend stands beside the plot, and the bottom margin holds the slanted labels
    legend = figure["layout"]["legend"]
    assert legend["orientation"] == "v" and legend["x"] > 1 and legend["xanchor"] == "left"
    assert figure["layout"]["margin"]["b"] >= tables.CHART_CHAR_PX * tables.CHART_LABEL / 2


def test_few_selected_clusters_show_with_the_best_of_the_rest() -> None:
    rows = [
        tables.ScoreRow(name=f"m{rank}", selected=rank in (2, 5), filtered_by=None, total=0, rank=rank)
        for rank in range(1, 21)
    ]
    pick = tables.chart_pick(reversed(rows))
    assert [row.name for row in pick.selected] == ["m2", "m5"]
    assert [row.name for row in pick.others] == [
        "m1",
        "m3",
        "m4",
        "m6",
        "m7",
        "m8",
        "m9",
        "m10",
        "m11",
        "m12",
    ]
    assert pick.not_shown == 8
    assert tables.chart_summary(pick) == "2 selected clusters and the best 10 not selected; 8 more not shown"


def test_a_placement_selecting_everything_draws_no_line_and_no_others() -> None:
    rows = [
        tables.ScoreRow(name=f"m{rank}", selected=True, filtered_by=None, total=0, rank=rank)
        for rank in (1, 2)
    ]
    figure = tables.chart_figure("t", "a", tables.chart_pick(rows), ["Balance"])
    assert figure["summary"] == "2 selected clusters"
    assert "shapes" not in figure["layout"]


def test_the_whatif_chart_counts_left_out_clusters_among_every_scored_one() -> None:
    rows = [
        tables.ScoreRow(name=f"m{rank}", selected=rank <= 3, filtered_by=None, total=0, rank=rank)
        for rank in range(1, 51)
    ]
    pick = whatif._chart_pick(rows, scored=900)
    assert len(pick.selected) == 3 and len(pick.others) == 10 and pick.not_shown == 887
