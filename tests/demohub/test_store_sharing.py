"""The store's objects are replaced on every write, never changed in place: readers in the hub's process
(`read`, a list's items, a watch event's old object) may hold them without copies, and a status write
shares the rest of the object with the version it replaces."""

from demohub.store import Store

BINDING = "ClusterResourceBinding"


def binding() -> dict[str, object]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": BINDING,
        "metadata": {"name": "web-member-1", "labels": {"app": "web"}},
        "spec": {"state": "Bound", "targetCluster": "member-1"},
    }


def test_a_status_write_leaves_the_version_it_replaces_as_it_was() -> None:
    store = Store()
    created = store.create(binding())
    before = store.read(BINDING, "web-member-1")
    assert before is not None and before == created

    conditions = [{"type": "Applied", "status": "True"}]
    written = store.replace(
        BINDING,
        "web-member-1",
        {"metadata": created["metadata"], "status": {"conditions": conditions}},
        subresource="status",
    )

    assert before == created and "status" not in before
    assert written["status"] == {"conditions": conditions}
    assert written["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    assert written["spec"] == before["spec"] and written["metadata"]["generation"] == 1
    # the caller's copy is its own; changing it changes nothing stored
    written["spec"]["state"] = "Unscheduled"
    conditions.append({"type": "Available", "status": "True"})
    assert store.get(BINDING, "web-member-1")["spec"]["state"] == "Bound"
    assert store.get(BINDING, "web-member-1")["status"] == {
        "conditions": [{"type": "Applied", "status": "True"}]
    }


def test_a_handed_over_status_is_stored_as_given_and_read_without_a_copy() -> None:
    store = Store()
    created = store.create(binding())
    status = {"conditions": [{"type": "Applied", "status": "True"}]}

    answer = store.replace(
        BINDING,
        "web-member-1",
        {"metadata": created["metadata"], "status": status},
        subresource="status",
        handed_over=True,
    )

    stored = store.read(BINDING, "web-member-1")
    assert stored is answer and stored["status"] is status
    assert store.read(BINDING, "missing") is None
    assert store.list(BINDING).items == [stored]
