"""Discovery documents (`/api`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`) for the served kinds."""

from typing import Any

from demohub.resources import STATUS_VERBS, VERBS, Resource, groups, resources_in

SERVER_VERSION = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-demohub",
    "platform": "python/demohub",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def core_resources() -> dict[str, Any]:
    """`/api/v1`: the demo hub serves no core kinds (namespaces exist implicitly)."""
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": []}


def _group_entry(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{version}", "version": version} for version in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group(name: str) -> dict[str, Any] | None:
    versions = groups().get(name)
    if versions is None:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1"} | _group_entry(name, versions)


def api_group_list() -> dict[str, Any]:
    entries = [_group_entry(name, versions) for name, versions in groups().items()]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": entries}


def _resource_entries(resource: Resource) -> list[dict[str, Any]]:
    main = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(VERBS),
    }
    status = {
        "name": f"{resource.plural}/status",
        "singularName": "",
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(STATUS_VERBS),
    }
    return [main, status]


def api_resource_list(group: str, version: str) -> dict[str, Any] | None:
    served = resources_in(group, version)
    if not served:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}",
        "resources": [entry for resource in served for entry in _resource_entries(resource)],
    }
