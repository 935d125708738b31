"""The score table maths from a stored explanation: weighted contributions, totals, ranks, sort, chart."""

from placement import tables
from placement.families import Family, fleet, ocm
from placement.scheduler import columns
from tests.placement_pages.explanations import ADDON, FLEET_EXPLANATION, MEMORY, OCM_EXPLANATION


def rows_by_name(family: Family, explanation: dict) -> dict[str, tables.ScoreRow]:
    return {row.name: row for row in tables.score_rows(family.score_table(explanation))}


def test_weighted_contributions_are_raw_times_weight_and_add_up_to_the_total() -> None:
    rows = rows_by_name(ocm.OCM, OCM_EXPLANATION)
    assert rows["a"].contributions == {"Balance": 100, "Steady": 0, MEMORY: 100, ADDON: -60}
    assert rows["b"].contributions == {"Balance": 100, "Steady": 100, MEMORY: 40, ADDON: 30}
    assert rows["c"].contributions == {"Balance": 0, "Steady": 0, MEMORY: 200, ADDON: 0}
    for name, total in (("a", 140), ("b", 270), ("c", 200)):
        assert rows[name].total == total == sum(rows[name].contributions.values())


def test_rows_are_in_rank_order_with_filtered_clusters_last_and_marked() -> None:
    rows = tables.score_rows(ocm.OCM.score_table(OCM_EXPLANATION))
    assert [(row.name, row.rank, row.selected) for row in rows] == [
        ("b", 1, True),
        ("c", 2, True),
        ("a", 3, False),
        ("d", None, False),
    ]
    assert rows[-1].filtered_by.startswith("predicate:")
    assert rows[-1].cells(["Balance", MEMORY]) == [(None, None), (None, None)]
    assert rows[0].cells(["Balance", MEMORY]) == [(100, 100), (20, 40)]


def test_prioritizer_columns_are_sorted_with_their_weights() -> None:
    assert ocm.OCM.prioritizer_columns(OCM_EXPLANATION) == [
        (ADDON, 3),
        ("Balance", 1),
        (MEMORY, 2),
        ("Steady", 1),
    ]
    assert fleet.FLEET.prioritizer_columns(FLEET_EXPLANATION) == [
        (fleet.AFFINITY, None),
        (fleet.TOPOLOGY, None),
    ]


def test_sorting_keeps_unscored_rows_last_and_filters_combine() -> None:
    rows = tables.score_rows(ocm.OCM.score_table(OCM_EXPLANATION))
    assert [r.name for r in tables.sort_rows(rows, "-rank")] == ["a", "c", "b", "d"]
    assert [r.name for r in tables.sort_rows(rows, "total")] == ["b", "c", "a", "d"]
    assert [r.name for r in tables.sort_rows(rows, "-total")] == ["a", "c", "b", "d"]
    assert [r.name for r in tables.sort_rows(rows, "-name")] == ["d", "c", "b", "a"]
    assert [r.name for r in tables.filter_rows(rows, show="selected")] == ["b", "c"]
    assert [r.name for r in tables.filter_rows(rows, show="filtered")] == ["d"]
    assert [r.name for r in tables.filter_rows(rows, name="A", show="scored")] == ["a"]


def test_fleet_ranks_by_topology_then_affinity_then_the_larger_name() -> None:
    rows = tables.score_rows(fleet.FLEET.score_table(FLEET_EXPLANATION))
    assert [(row.name, row.rank) for row in rows] == [
        ("m2", 1),
        ("m3", 2),
        ("m5", 3),
        ("m1", 4),
        ("m4", None),
    ]
    m2 = rows[0]
    assert m2.scores == {fleet.AFFINITY: 20, fleet.TOPOLOGY: 1} and m2.total == 21


def test_chart_stacks_one_trace_per_prioritizer_over_the_picked_ranks() -> None:
    rows = tables.score_rows(ocm.OCM.score_table(OCM_EXPLANATION))
    pick = tables.chart_pick(rows, selected=1, others=1)
    figure = tables.chart_figure(
        ocm.OCM.chart_title, ocm.OCM.chart_axis, pick, [ADDON, "Balance", MEMORY, "Steady"]
    )
    assert figure["layout"]["barmode"] == "relative"
    assert [trace["name"] for trace in figure["data"]] == [ADDON, "Balance", MEMORY, "Steady"]
    # the best selected cluster, then the best one not selected
    assert all(trace["x"] == ["b", "a"] and trace["type"] == "bar" for trace in figure["data"])
    assert [trace["y"] for trace in figure["data"]] == [[30, -60], [100, 100], [40, 100], [100, 0]]
    assert figure["summary"] == "1 selected cluster and the best 1 not selected; 1 more not shown"


def test_columnar_and_row_shaped_explanations_give_the_same_table() -> None:
    families: list[tuple[Family, dict]] = [(ocm.OCM, OCM_EXPLANATION), (fleet.FLEET, FLEET_EXPLANATION)]
    for family, explanation in families:
        columnar = {**explanation, "clusters": columns.from_rows(explanation["clusters"])}
        rows = tables.score_rows(family.score_table(explanation))
        assert tables.score_rows(family.score_table(columnar)) == rows
        assert tables.explanation_rows(columnar) == tables.explanation_rows(explanation)
        assert tables.explanation_rows(columnar) == explanation["clusters"]
        table = family.score_table(columnar)
        shown = tables.ScoreRows(table, tables.sort_rows(table.keys(), "-total"))
        assert list(shown) == tables.sort_rows(rows, "-total")
        assert shown[1:3] == list(shown)[1:3]
