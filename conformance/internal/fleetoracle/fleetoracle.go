// Package fleetoracle runs the upstream KubeFleet scheduler framework on one conformance case.
//
// Every ClusterResourcePlacement of the case is scheduled by the framework the hub agent builds
// (`framework.NewFramework` with `profile.NewDefaultProfile`), on a controller-runtime fake client
// holding the case's MemberClusters and ClusterResourceBindings plus the policy snapshot the CRP
// controller would create. The verdict is read back from the fake client after the last cycle.
package fleetoracle

import (
	"encoding/json"
	"fmt"
	"time"

	clusterv1beta1 "github.com/kubefleet-dev/kubefleet/apis/cluster/v1beta1"
	placementv1beta1 "github.com/kubefleet-dev/kubefleet/apis/placement/v1beta1"
	"github.com/kubefleet-dev/kubefleet/pkg/utils/defaulter"

	"fleetui.local/conformance/internal/casefile"
)

// hub is the decoded case: the objects a KubeFleet hub would hold before the scheduler runs.
type hub struct {
	clusters   []*clusterv1beta1.MemberCluster
	placements []*placementv1beta1.ClusterResourcePlacement
	bindings   []*placementv1beta1.ClusterResourceBinding
}

// Run schedules every ClusterResourcePlacement of the case with the upstream framework and returns
// one verdict per placement, in input order.
func Run(c *casefile.Case) casefile.Result {
	decoded, err := decode(c.Manifests)
	if err != nil {
		return casefile.Result{ID: c.ID, Error: err.Error()}
	}
	verdicts, elapsed, err := scheduleAtCaseTime(decoded, c.Now)
	if err != nil {
		return casefile.Result{ID: c.ID, Error: err.Error()}
	}
	placements := make([]any, len(verdicts))
	for i, v := range verdicts {
		placements[i] = v
	}
	return casefile.Result{ID: c.ID, Placements: placements, ElapsedNs: elapsed.Nanoseconds()}
}

// decode reads the manifests into the upstream API types, the way the API server would hand them
// to the controllers: CRPs get the defaults the mutating webhook and the CRD schema apply.
func decode(manifests []json.RawMessage) (*hub, error) {
	decoded := &hub{}
	for i, raw := range manifests {
		switch kind := casefile.Kind(raw); kind {
		case "MemberCluster":
			cluster := &clusterv1beta1.MemberCluster{}
			if err := json.Unmarshal(raw, cluster); err != nil {
				return nil, fmt.Errorf("manifest %d (MemberCluster): %w", i, err)
			}
			decoded.clusters = append(decoded.clusters, cluster)
		case "ClusterResourcePlacement":
			crp := &placementv1beta1.ClusterResourcePlacement{}
			if err := json.Unmarshal(raw, crp); err != nil {
				return nil, fmt.Errorf("manifest %d (ClusterResourcePlacement): %w", i, err)
			}
			defaulter.SetPlacementDefaults(crp)
			// The CRD schema defaults an empty placement type to PickAll; the webhook's defaulter
			// only covers a missing policy, and the framework refuses an empty type.
			if crp.Spec.Policy.PlacementType == "" {
				crp.Spec.Policy.PlacementType = placementv1beta1.PickAllPlacementType
			}
			decoded.placements = append(decoded.placements, crp)
		case "ClusterResourceBinding":
			binding := &placementv1beta1.ClusterResourceBinding{}
			if err := json.Unmarshal(raw, binding); err != nil {
				return nil, fmt.Errorf("manifest %d (ClusterResourceBinding): %w", i, err)
			}
			decoded.bindings = append(decoded.bindings, binding)
		default:
			return nil, fmt.Errorf("manifest %d: unsupported KubeFleet kind %q", i, kind)
		}
	}
	return decoded, nil
}

// scheduleAtCaseTime runs the placements with the real clock standing in for the case's `now`.
//
// The upstream eligibility checker reads the clock (`time.Since` on heartbeats and health
// transitions) and takes no clock to inject, so every MemberCluster timestamp is shifted by a whole
// number of seconds that puts the real clock, seen through the shifted timestamps, within the last
// second before `now` (rounded up to a whole second). Stored objects keep whole seconds, as
// metav1.Time serializes them, so any instant in that window compares with them exactly as `now`
// does. A run that outlasts the window is repeated on fresh objects.
func scheduleAtCaseTime(decoded *hub, now time.Time) ([]verdict, time.Duration, error) {
	margin := initialMargin
	for runs := 1; ; runs++ {
		window := newClockWindow(now, time.Now())
		for window.headroom < margin {
			time.Sleep(window.headroom + time.Millisecond)
			window = newClockWindow(now, time.Now())
		}
		verdicts, elapsed, err := scheduleAll(decoded, window.shift)
		if err != nil || window.holds(time.Now()) || runs == maxRuns {
			return verdicts, elapsed, err
		}
		margin = min(2*time.Since(window.start), maxMargin)
	}
}

// scheduleAll schedules every placement on one fake hub built from fresh copies of the case's
// objects, its timestamps shifted by shift.
func scheduleAll(decoded *hub, shift time.Duration) ([]verdict, time.Duration, error) {
	fake, err := newFakeHub(decoded, shift)
	if err != nil {
		return nil, 0, err
	}
	verdicts := make([]verdict, 0, len(decoded.placements))
	var elapsed time.Duration
	for _, crp := range decoded.placements {
		v, took, err := fake.schedule(crp)
		if err != nil {
			return nil, 0, err
		}
		verdicts = append(verdicts, v)
		elapsed += took
	}
	return verdicts, elapsed, nil
}
