"""The trigger chain's parsed OCM Placements are kept per process: a placement is parsed again only when
its stored fields changed, by whatever wrote them, and one the scheduler cannot read is left out."""

from typing import Any

import pytest

from demohub import DemoHub
from placement import families, parsed_placements, service
from placement.models import Placement
from tests.factories import placement_role, synced_demo_hub_row

pytestmark = pytest.mark.django_db


def test_placements_are_parsed_again_only_when_their_stored_fields_changed(
    demo_hub: DemoHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    editor = placement_role(hub, ("default",), username="editor")
    rows = [
        service.create_placement(
            kind=Placement.Kind.PLACEMENT,
            hub=hub,
            namespace="default",
            name=name,
            spec={"clusterSets": ["global"], "numberOfClusters": 2},
            actor=editor,
        )
        for name in ("web", "db")
    ]
    parsed: list[str] = []
    parse = families.ocm.parse_stored

    def counted(row: Placement) -> Any:
        parsed.append(row.name)
        return parse(row)

    monkeypatch.setattr(families.ocm, "parse_stored", counted)
    first = parsed_placements.of_hub(hub.pk)
    assert {"web", "db"} <= {placement.name for placement in first.values()}
    parsed.clear()

    assert parsed_placements.of_hub(hub.pk) == first
    assert parsed == []

    # written as another process would, with no signal to this one
    Placement.objects.filter(pk=rows[0].pk).update(spec={"clusterSets": ["global"], "numberOfClusters": 5})
    Placement.objects.filter(pk=rows[1].pk).update(spec={"numberOfClusters": -1})
    again = parsed_placements.of_hub(hub.pk)

    assert sorted(parsed) == ["db", "web"]
    assert again[rows[0].pk].number_of_clusters == 5
    assert rows[1].pk not in again  # a negative numberOfClusters is refused
