package ocmoracle

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"fleetui.local/conformance/internal/casefile"
)

const (
	setLabel       = "cluster.open-cluster-management.io/clusterset"
	placementLabel = "cluster.open-cluster-management.io/placement"
	clusterV1      = "cluster.open-cluster-management.io/v1"
	clusterV1beta1 = "cluster.open-cluster-management.io/v1beta1"
	clusterV1beta2 = "cluster.open-cluster-management.io/v1beta2"
)

var testNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

type object = map[string]any

// boundSet is the set "clusterSets" bound to namespace ns1, as the upstream scheduler tests build it.
func boundSet() []object {
	return []object{
		{"apiVersion": clusterV1beta2, "kind": "ManagedClusterSet", "metadata": object{"name": "clusterSets"}},
		{
			"apiVersion": clusterV1beta2, "kind": "ManagedClusterSetBinding",
			"metadata": object{"namespace": "ns1", "name": "clusterSets"},
			"spec":     object{"clusterSet": "clusterSets"},
		},
	}
}

func cluster(name string, status object, spec object) object {
	return object{
		"apiVersion": clusterV1, "kind": "ManagedCluster",
		"metadata": object{"name": name, "labels": object{setLabel: "clusterSets"}},
		"spec":     spec,
		"status":   status,
	}
}

func memory(allocatable string) object {
	return object{"allocatable": object{"memory": allocatable}, "capacity": object{"memory": "100"}}
}

func existingDecision(name string, labels object, clusters ...string) object {
	decisions := []object{}
	for _, c := range clusters {
		decisions = append(decisions, object{"clusterName": c, "reason": ""})
	}
	return object{
		"apiVersion": clusterV1beta1, "kind": "PlacementDecision",
		"metadata": object{"namespace": "ns1", "name": name, "labels": labels},
		"status":   object{"decisions": decisions},
	}
}

func placement(spec object) object {
	return object{
		"apiVersion": clusterV1beta1, "kind": "Placement",
		"metadata": object{"namespace": "ns1", "name": "placement1"},
		"spec":     spec,
	}
}

// run schedules the objects at testNow and returns the one verdict, as JSON values.
func run(t *testing.T, objects ...object) map[string]any {
	t.Helper()
	c := &casefile.Case{ID: t.Name(), Family: "ocm", Now: testNow}
	for _, o := range objects {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		c.Manifests = append(c.Manifests, raw)
	}
	result := Run(c)
	if result.Error != "" {
		t.Fatalf("oracle error: %s", result.Error)
	}
	if len(result.Placements) != 1 {
		t.Fatalf("want one verdict, got %d", len(result.Placements))
	}
	encoded, err := json.Marshal(result.Placements[0])
	if err != nil {
		t.Fatal(err)
	}
	var verdict map[string]any
	if err := json.Unmarshal(encoded, &verdict); err != nil {
		t.Fatal(err)
	}
	return verdict
}

// expect compares verdict fields with their JSON forms.
func expect(t *testing.T, verdict map[string]any, want map[string]string) {
	t.Helper()
	for field, text := range want {
		var expected any
		if err := json.Unmarshal([]byte(text), &expected); err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		if !reflect.DeepEqual(verdict[field], expected) {
			got, _ := json.Marshal(verdict[field])
			t.Errorf("%s: got %s, want %s", field, got, text)
		}
	}
}

const allScheduled = `[{"type": "PlacementMisconfigured", "status": "False", "reason": "Succeedconfigured"},
	{"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled"}]`

// Vector schedule-7 (upstream schedule_test.go "placement with additive Prioritizer Policy"); the
// memory prioritizer's weight is left out, so only the CRD default of 1 gives the vector's totals.
func TestAdditivePolicyWithAddOnScores(t *testing.T) {
	objects := boundSet()
	for i, allocatable := range []string{"100", "50", "0"} {
		name := []string{"cluster1", "cluster2", "cluster3"}[i]
		objects = append(objects, cluster(name, memory(allocatable), object{}), object{
			"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
			"metadata": object{"namespace": name, "name": "demo"},
			"status":   object{"scores": []object{{"name": "demo", "value": 30 + 10*i}}},
		})
	}
	objects = append(objects, placement(object{
		"numberOfClusters": 2,
		"prioritizerPolicy": object{"mode": "Additive", "configurations": []object{
			{"scoreCoordinate": object{"type": "BuiltIn", "builtIn": "Balance"}, "weight": 3},
			{"scoreCoordinate": object{"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}},
			{"scoreCoordinate": object{"type": "AddOn", "addOn": object{"resourceName": "demo", "scoreName": "demo"}}, "weight": 1},
		}},
	}))
	expect(t, run(t, objects...), map[string]string{
		"conditions": allScheduled,
		"feasible":   `["cluster1", "cluster2", "cluster3"]`,
		"scores": `{"AddOn/demo/demo": {"cluster1": 30, "cluster2": 40, "cluster3": 50},
			"Balance": {"cluster1": 100, "cluster2": 100, "cluster3": 100},
			"ResourceAllocatableMemory": {"cluster1": 100, "cluster2": 0, "cluster3": -100},
			"Steady": {"cluster1": 0, "cluster2": 0, "cluster3": 0}}`,
		"totals":                   `{"cluster1": 430, "cluster2": 340, "cluster3": 250}`,
		"decisions":                `[{"name": "placement1-decision-1", "groupName": "", "groupIndex": 0, "clusters": ["cluster1", "cluster2"]}]`,
		"numberOfSelectedClusters": `2`,
		"decisionGroups":           `[{"decisionGroupIndex": 0, "decisionGroupName": "", "decisions": ["placement1-decision-1"], "clusterCount": 2}]`,
		"requeueAfterSeconds":      `null`,
	})
}

// Vector schedule-11 (upstream "do not schedule to other cluster even with least decisions"):
// Balance counts the decisions of other placements, Steady keeps the existing one, and the kept
// decision object gets the group labels it lacked.
func TestSteadyOutweighsBalance(t *testing.T) {
	objects := boundSet()
	for _, name := range []string{"cluster1", "cluster2", "cluster3"} {
		objects = append(objects, cluster(name, object{}, object{}))
	}
	objects = append(objects,
		existingDecision("others-decision-1", object{}, "cluster2", "cluster3"),
		existingDecision("others-decision-2", object{}, "cluster1", "cluster2"),
		existingDecision("placement1-decision-1", object{placementLabel: "placement1"}, "cluster3"),
		placement(object{"numberOfClusters": 1}),
	)
	expect(t, run(t, objects...), map[string]string{
		"conditions": allScheduled,
		"scores": `{"Balance": {"cluster1": 0, "cluster2": -100, "cluster3": 0},
			"Steady": {"cluster1": 0, "cluster2": 0, "cluster3": 100}}`,
		"totals":    `{"cluster1": 0, "cluster2": -100, "cluster3": 100}`,
		"decisions": `[{"name": "placement1-decision-1", "groupName": "", "groupIndex": 0, "clusters": ["cluster3"]}]`,
	})
}

// A toleration that still tolerates a decided cluster's taint requeues the placement when it
// expires, timed from the case's instant and not from the wall clock.
func TestTolerationExpiryRequeues(t *testing.T) {
	added := testNow.Add(-100 * time.Second).Format(time.RFC3339)
	taint := object{"key": "maintenance", "effect": "NoSelect", "timeAdded": added}
	objects := append(boundSet(),
		cluster("cluster1", object{}, object{"taints": []object{taint}}),
		cluster("cluster2", object{}, object{}),
		existingDecision("placement1-decision-1", object{placementLabel: "placement1"}, "cluster1"),
		placement(object{"tolerations": []object{
			{"key": "maintenance", "operator": "Exists", "tolerationSeconds": 300},
		}}),
	)
	expect(t, run(t, objects...), map[string]string{
		"feasible":            `["cluster1", "cluster2"]`,
		"requeueAfterSeconds": `200`,
	})
}

// An invalid label selector is admitted (the CRD schema does not check selector syntax) and the
// controller reports it as PlacementMisconfigured without running the rest of the filters.
func TestInvalidLabelSelectorIsMisconfigured(t *testing.T) {
	objects := append(boundSet(),
		cluster("cluster1", object{}, object{}),
		placement(object{"predicates": []object{{"requiredClusterSelector": object{
			"labelSelector": object{"matchLabels": object{"bad key!": "x"}},
		}}}}),
	)
	expect(t, run(t, objects...), map[string]string{
		"conditions": `[{"type": "PlacementMisconfigured", "status": "True", "reason": "Misconfigured"},
			{"type": "PlacementSatisfied", "status": "False", "reason": "NoManagedClusterMatched"}]`,
		"feasible":  `null`,
		"decisions": `[{"name": "placement1-decision-1", "groupName": "", "groupIndex": 0, "clusters": []}]`,
	})
}

// Namespaced manifests that name no namespace land in "default", as kubectl puts them: the binding
// makes the set eligible for the placement, and the decision is the placement's own (its toleration
// requeues it).
func TestManifestsWithoutNamespaceAreInDefault(t *testing.T) {
	added := testNow.Add(-100 * time.Second).Format(time.RFC3339)
	taint := object{"key": "maintenance", "effect": "NoSelect", "timeAdded": added}
	decision := existingDecision("placement1-decision-1", object{placementLabel: "placement1"}, "cluster1")
	binding := boundSet()[1]
	unplaced := []object{binding, decision, placement(object{"tolerations": []object{
		{"key": "maintenance", "operator": "Exists", "tolerationSeconds": 300},
	}})}
	for _, o := range unplaced {
		delete(o["metadata"].(object), "namespace")
	}
	objects := append([]object{boundSet()[0], cluster("cluster1", object{}, object{"taints": []object{taint}})},
		unplaced...)
	verdict := run(t, objects...)
	expect(t, verdict, map[string]string{
		"namespace":           `"default"`,
		"feasible":            `["cluster1"]`,
		"requeueAfterSeconds": `200`,
	})
}
