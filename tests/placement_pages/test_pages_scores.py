"""The score table maths from a stored explanation: weighted contributions, totals, ranks, sort, chart."""

from collections.abc import Mapping
from typing import Any

from placement import explanations, tables
from placement.families import Family, fleet, ocm
from placement.scheduler.record import ClusterRecord
from tests.placement_pages.explanations import ADDON, FLEET_EXPLANATION, MEMORY, OCM_EXPLANATION


def score_table(family: Family, explanation: Mapping[str, Any]) -> tables.ScoreTable:
    return family.score_table(explanation, explanations.record_of(explanation))


def score_rows(family: Family, explanation: Mapping[str, Any], sort: str = "rank") -> list[tables.ScoreRow]:
    table = score_table(family, explanation)
    return list(tables.ScoreRows(table, table.order(sort)))


def rows_by_name(family: Family, explanation: dict) -> dict[str, tables.ScoreRow]:
    return {row.name: row for row in score_rows(family, explanation)}


def test_weighted_contributions_are_raw_times_weight_and_add_up_to_the_total() -> None:
    rows = rows_by_name(ocm.OCM, OCM_EXPLANATION)
    assert rows["a"].contributions == {"Balance": 100, "Steady": 0, MEMORY: 100, ADDON: -60}
    assert rows["b"].contributions == {"Balance": 100, "Steady": 100, MEMORY: 40, ADDON: 30}
    assert rows["c"].contributions == {"Balance": 0, "Steady": 0, MEMORY: 200, ADDON: 0}
    for name, total in (("a", 140), ("b", 270), ("c", 200)):
        assert rows[name].total == total == sum(rows[name].contributions.values())


def test_rows_are_in_rank_order_with_filtered_clusters_last_and_marked() -> None:
    rows = score_rows(ocm.OCM, OCM_EXPLANATION)
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
    def names(sort: str, **shown: str) -> list[str]:
        table = score_table(ocm.OCM, OCM_EXPLANATION)
        return [row.name for row in tables.ScoreRows(table, table.shown(table.order(sort), **shown))]

    assert names("rank") == ["b", "c", "a", "d"]
    assert names("-rank") == ["a", "c", "b", "d"]
    assert names("total") == ["b", "c", "a", "d"]
    assert names("-total") == ["a", "c", "b", "d"]
    assert names("name") == ["a", "b", "c", "d"]
    assert names("-name") == ["d", "c", "b", "a"]
    assert names("rank", show="selected") == ["b", "c"]
    assert names("rank", show="filtered") == ["d"]
    assert names("rank", name="A", show="scored") == ["a"]
    assert names("-total", name="nothing") == []


def test_equal_totals_sort_by_name_and_unranked_rows_by_name() -> None:
    rows = [
        {"name": n, "selected": False, "filteredBy": r, "scores": {}, "total": t, "rank": k}
        for n, r, t, k in [
            ("z", None, 5, 1),
            ("e", None, 5, 2),
            ("y", "f", None, None),
            ("b", "f", None, None),
        ]
    ]
    table = score_table(ocm.OCM, {"clusters": rows})
    assert [table.row(p).name for p in table.order("total")] == ["e", "z", "b", "y"]
    assert [table.row(p).name for p in table.order("rank")] == ["z", "e", "b", "y"]
    assert [table.row(p).name for p in table.order("-rank")] == ["e", "z", "b", "y"]


def test_fleet_ranks_by_topology_then_affinity_then_the_larger_name() -> None:
    rows = score_rows(fleet.FLEET, FLEET_EXPLANATION)
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
    rows = score_rows(ocm.OCM, OCM_EXPLANATION)
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


def test_columnar_row_shaped_and_packed_explanations_give_the_same_table() -> None:
    families: list[tuple[Family, dict]] = [(ocm.OCM, OCM_EXPLANATION), (fleet.FLEET, FLEET_EXPLANATION)]
    for family, explanation in families:
        record = explanations.record_of(explanation)
        columnar = {**explanation, "clusters": record.columns_as_lists()}
        packed = ClusterRecord.unpack(record.pack())
        assert (
            record.rows()
            == packed.rows()
            == explanations.record_of(columnar).rows()
            == explanation["clusters"]
        )
        rows = score_rows(family, explanation, "-total")
        assert score_rows(family, columnar, "-total") == rows
        table = family.score_table(explanation, packed)
        shown = tables.ScoreRows(table, table.order("-total"))
        assert list(shown) == rows
        assert shown[1:3] == rows[1:3]
