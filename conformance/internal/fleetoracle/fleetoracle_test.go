package fleetoracle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"fleetui.local/conformance/internal/casefile"
)

const caseNow = "2024-05-01T12:00:00Z"

// memberCluster is a joined, healthy member whose last heartbeat came heartbeatAgo before caseNow.
func memberCluster(name string, heartbeatAgo time.Duration, labels string) string {
	now, _ := time.Parse(time.RFC3339, caseNow)
	return fmt.Sprintf(`{"apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
		"metadata": {"name": %q, "labels": {%s}},
		"spec": {"identity": {"kind": "ServiceAccount", "name": "sa", "namespace": "fleet-system"}},
		"status": {"agentStatus": [{"type": "MemberAgent", "lastReceivedHeartbeat": %q, "conditions": [
			{"type": "Joined", "status": "True", "reason": "Joined", "lastTransitionTime": "2024-04-01T00:00:00Z"},
			{"type": "Healthy", "status": "True", "reason": "Healthy", "lastTransitionTime": "2024-04-01T00:00:00Z"}]}]}}`,
		name, labels, now.Add(-heartbeatAgo).Format(time.RFC3339))
}

func crp(name, policy string) string {
	return fmt.Sprintf(`{"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterResourcePlacement",
		"metadata": {"name": %q, "generation": 1},
		"spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
			"policy": %s}}`, name, policy)
}

func boundBinding(name, placement, cluster, snapshot string) string {
	return fmt.Sprintf(`{"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterResourceBinding",
		"metadata": {"name": %q, "labels": {"kubernetes-fleet.io/parent-CRP": %q}},
		"spec": {"state": "Bound", "targetCluster": %q, "schedulingPolicySnapshotName": %q,
			"clusterDecision": {"clusterName": %q, "selected": true,
				"clusterScore": {"affinityScore": 7, "priorityScore": 0}}}}`,
		name, placement, cluster, snapshot, cluster)
}

func run(t *testing.T, manifests ...string) casefile.Result {
	t.Helper()
	line := fmt.Sprintf(`{"id": "t", "family": "fleet", "now": %q, "manifests": [%s]}`,
		caseNow, strings.Join(manifests, ","))
	var c casefile.Case
	if err := json.Unmarshal([]byte(line), &c); err != nil {
		t.Fatal(err)
	}
	return Run(&c)
}

// only returns the single verdict of a result, failing the test on a case error.
func only(t *testing.T, result casefile.Result) verdict {
	t.Helper()
	if result.Error != "" || len(result.Placements) != 1 {
		t.Fatalf("want one verdict, got %+v", result)
	}
	return result.Placements[0].(verdict)
}

func scoreOfValues(affinity, topology int32) *score {
	return &score{AffinityScore: &affinity, TopologySpreadScore: &topology}
}

// A heartbeat exactly at the five-minute timeout is still eligible at `now`; one second older is not.
func TestPickAllHeartbeatTimeoutAtCaseTime(t *testing.T) {
	v := only(t, run(t,
		memberCluster("fresh", time.Second, ""),
		memberCluster("on-timeout", 5*time.Minute, ""),
		memberCluster("stale", 5*time.Minute+time.Second, ""),
		crp("all", `{"placementType": "PickAll"}`),
	))
	zero := scoreOfValues(0, 0)
	wantBindings := []binding{
		{TargetCluster: "fresh", State: "Scheduled", ClusterScore: zero},
		{TargetCluster: "on-timeout", State: "Scheduled", ClusterScore: zero},
	}
	if !reflect.DeepEqual(v.Bindings, wantBindings) {
		t.Errorf("bindings = %+v, want %+v", v.Bindings, wantBindings)
	}
	wantDecisions := []decision{
		{ClusterName: "fresh", Selected: true, ClusterScore: zero},
		{ClusterName: "on-timeout", Selected: true, ClusterScore: zero},
		{ClusterName: "stale", Selected: false},
	}
	if !reflect.DeepEqual(v.Decisions, wantDecisions) {
		t.Errorf("decisions = %+v, want %+v", v.Decisions, wantDecisions)
	}
	wantConditions := []condition{{Type: "Scheduled", Status: "True", Reason: "SchedulingPolicyFulfilled"}}
	if !reflect.DeepEqual(v.Conditions, wantConditions) || v.RequeueAfterSeconds != nil || v.Error != nil {
		t.Errorf("verdict = %+v", v)
	}
}

// PickN keeps a binding made under an older policy snapshot when its cluster is picked again (it is
// patched onto the new snapshot with its new score, state kept) and creates one for the next best
// cluster. The cycle asks for no requeue, so its decisions stand: the cluster not picked is listed
// unselected with its score, as the real scheduler leaves it until an outside event.
func TestPickNReusesObsoleteBinding(t *testing.T) {
	v := only(t, run(t,
		memberCluster("a", time.Second, `"tier": "gold"`),
		memberCluster("b", time.Second, `"tier": "silver"`),
		memberCluster("c", time.Second, `"tier": "bronze"`),
		crp("two", `{"placementType": "PickN", "numberOfClusters": 2, "affinity": {"clusterAffinity": {
			"preferredDuringSchedulingIgnoredDuringExecution": [
				{"weight": 10, "preference": {"labelSelector": {"matchLabels": {"tier": "gold"}}}},
				{"weight": 5, "preference": {"labelSelector": {"matchLabels": {"tier": "silver"}}}}]}}}`),
		boundBinding("two-a-old", "two", "a", "two-previous"),
	))
	gold, silver := scoreOfValues(10, 0), scoreOfValues(5, 0)
	wantBindings := []binding{
		{TargetCluster: "a", State: "Bound", ClusterScore: gold},
		{TargetCluster: "b", State: "Scheduled", ClusterScore: silver},
	}
	if !reflect.DeepEqual(v.Bindings, wantBindings) {
		t.Errorf("bindings = %+v, want %+v", v.Bindings, wantBindings)
	}
	wantDecisions := []decision{
		{ClusterName: "a", Selected: true, ClusterScore: gold},
		{ClusterName: "b", Selected: true, ClusterScore: silver},
		{ClusterName: "c", Selected: false, ClusterScore: scoreOfValues(0, 0)},
	}
	if !reflect.DeepEqual(v.Decisions, wantDecisions) {
		t.Errorf("decisions = %+v, want %+v", v.Decisions, wantDecisions)
	}
}

// PickN without numberOfClusters leaves the snapshot without its count annotation: upstream aborts
// the cycle, and the verdict carries the error and no decisions.
func TestPickNWithoutCountIsACycleError(t *testing.T) {
	v := only(t, run(t, memberCluster("a", time.Second, ""), crp("n", `{"placementType": "PickN"}`)))
	if v.Error == nil || !strings.Contains(*v.Error, "number-of-clusters") {
		t.Errorf("error = %v, want the missing annotation", v.Error)
	}
	if len(v.Decisions) != 0 || len(v.Bindings) != 0 || len(v.Conditions) != 0 {
		t.Errorf("verdict = %+v, want nothing scheduled", v)
	}
}

func TestUnknownKindRefusesTheCase(t *testing.T) {
	result := run(t, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}`)
	if !strings.Contains(result.Error, `unsupported KubeFleet kind "ConfigMap"`) || result.Placements != nil {
		t.Errorf("result = %+v", result)
	}
}
