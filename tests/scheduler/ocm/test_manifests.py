"""Parsing hub manifests: CRD defaults, legacy forms, and what the API server rejects."""

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.ocm.types import ADDITIVE, BUILT_IN, EQUAL, EXCLUSIVE_CLUSTER_SET_LABEL
from placement.scheduler.timeutil import ZERO_TIME
from tests.scheduler.ocm.builders import API, cluster, cluster_set, parse, placement


def _config(**config):
    return {"prioritizerPolicy": {"configurations": [config]}}


def test_legacy_cluster_set_label_is_read_as_exclusive():
    notes = []
    from placement.scheduler.ocm.manifests import parse_ocm_object

    doc = {
        "apiVersion": f"{API}/v1beta1",
        "kind": "ManagedClusterSet",
        "metadata": {"name": "prod"},
        "spec": {"clusterSelector": {"selectorType": "LegacyClusterSetLabel"}},
    }
    assert parse_ocm_object(doc, notes.append).selector_type == EXCLUSIVE_CLUSTER_SET_LABEL
    assert notes


def test_legacy_name_in_v1beta2_is_kept_so_scheduling_errors_like_upstream():
    assert cluster_set("prod", "LegacyClusterSetLabel").selector_type == "LegacyClusterSetLabel"


def test_missing_selector_type_defaults_to_exclusive_and_missing_label_selector_is_none():
    parsed = cluster_set("prod")
    assert parsed.selector_type == EXCLUSIVE_CLUSTER_SET_LABEL
    assert parsed.label_selector is None


def test_v1alpha1_prioritizer_name_maps_to_builtin_score_coordinate():
    parsed = placement(**_config(name="Balance", weight=2))
    (config,) = parsed.prioritizer_policy.configurations
    assert (config.score_coordinate.type, config.score_coordinate.built_in, config.weight) == (
        BUILT_IN,
        "Balance",
        2,
    )
    assert parsed.to_spec_dict()["prioritizerPolicy"]["configurations"] == [
        {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 2}
    ]


def test_score_coordinate_wins_over_legacy_name():
    parsed = placement(**_config(name="Balance", scoreCoordinate={"builtIn": "Steady"}))
    assert parsed.prioritizer_policy.configurations[0].score_coordinate.built_in == "Steady"


def test_weight_defaults_to_one_and_mode_to_additive():
    parsed = placement(**_config(scoreCoordinate={"builtIn": "Steady"}))
    assert parsed.prioritizer_policy.mode == ADDITIVE
    assert parsed.prioritizer_policy.configurations[0].weight == 1


def test_weight_above_ten_is_rejected_like_the_crd():
    with pytest.raises(ManifestError) as error:
        placement(**_config(scoreCoordinate={"builtIn": "Balance"}, weight=11))
    assert error.value.field == "spec.prioritizerPolicy.configurations[0].weight"
    assert str(error.value) == (
        "spec.prioritizerPolicy.configurations[0].weight: Invalid value: 11: "
        "spec.prioritizerPolicy.configurations[0].weight in body should be less than or equal to 10"
    )


def test_negative_number_of_clusters_is_rejected():
    with pytest.raises(ManifestError, match="spec.numberOfClusters"):
        placement(numberOfClusters=-1)


def test_an_unconvertible_selector_is_kept_for_the_scheduler_to_report():
    predicates = [
        {
            "requiredClusterSelector": {
                "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Foo"}]}
            }
        }
    ]
    (predicate,) = placement(predicates=predicates).predicates
    assert predicate.selector_problem is not None
    assert predicate.selector_problem.field.endswith("requiredClusterSelector.labelSelector")


def test_a_selector_with_the_wrong_types_is_a_manifest_error():
    predicates = [{"requiredClusterSelector": {"labelSelector": {"matchExpressions": [{"key": "a"}]}}}]
    with pytest.raises(ManifestError) as error:
        placement(predicates=predicates)
    assert error.value.field.endswith("matchExpressions[0].operator")


@pytest.mark.parametrize(
    "toleration", [{"key": "a", "operator": "Like"}, {"key": "a", "effect": "NoExecute"}]
)
def test_toleration_enums_are_checked(toleration):
    with pytest.raises(ManifestError):
        placement(tolerations=[toleration])


def test_binding_name_must_equal_its_cluster_set():
    doc = {
        "apiVersion": f"{API}/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": {"namespace": "apps", "name": "prod"},
        "spec": {"clusterSet": "dev"},
    }
    with pytest.raises(ManifestError, match="spec.clusterSet"):
        parse(doc)


def test_missing_name_is_rejected():
    with pytest.raises(ManifestError, match="metadata.name"):
        parse({"apiVersion": f"{API}/v1", "kind": "ManagedCluster", "metadata": {}})


@pytest.mark.parametrize(
    "spec",
    [
        {"prioritizerPolicy": {"mode": "Foo"}},
        _config(scoreCoordinate={"type": "BuiltIn", "builtIn": "Spread"}),
        _config(weight=2),
        _config(scoreCoordinate={"type": "AddOn"}),
        {"tolerations": [{"key": "", "operator": "Equal"}]},
        {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "25"}}},
        {
            "predicates": [
                {"requiredClusterSelector": {"celSelector": {"celExpressions": ["invalid.expression"]}}}
            ]
        },
        {"spreadPolicy": {"spreadConstraints": [{"topologyKey": "zone", "topologyKeyType": "Label"}]}},
    ],
)
def test_values_the_scheduler_reports_as_misconfigured_still_parse(spec):
    assert placement(**spec).name == "web"


def test_toleration_operator_defaults_to_equal():
    assert placement(tolerations=[{"key": "a", "value": "b"}]).tolerations[0].operator == EQUAL


def test_cluster_claims_taints_and_quantities():
    parsed = cluster(
        "c1",
        claims={"region": "eu"},
        taints=[{"key": "gpu", "effect": "NoSelect"}],
        allocatable={"cpu": 4, "memory": "2Gi"},
        capacity={"cpu": "8"},
    )
    assert parsed.claim_map == {"region": "eu"}
    assert parsed.taints[0].time_added == ZERO_TIME
    assert parsed.allocatable == {"cpu": "4", "memory": "2Gi"}


def test_bad_quantity_is_rejected():
    with pytest.raises(ManifestError, match="status.allocatable.cpu"):
        cluster("c1", allocatable={"cpu": "lots"})
