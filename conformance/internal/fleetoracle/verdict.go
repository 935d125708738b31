package fleetoracle

import (
	"context"
	"math"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/kubefleet-dev/kubefleet/apis/placement/v1beta1"
)

// verdict is the Fleet verdict of conformance/README.md: the state after the last cycle.
type verdict struct {
	Kind                string      `json:"kind"`
	Name                string      `json:"name"`
	Conditions          []condition `json:"conditions"`
	Decisions           []decision  `json:"decisions"`
	Bindings            []binding   `json:"bindings"`
	RequeueAfterSeconds *float64    `json:"requeueAfterSeconds"`
	Error               *string     `json:"error"`
}

type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// score spells out both scores, null when upstream left one unset.
type score struct {
	AffinityScore       *int32 `json:"affinityScore"`
	TopologySpreadScore *int32 `json:"topologySpreadScore"`
}

type decision struct {
	ClusterName  string `json:"clusterName"`
	Selected     bool   `json:"selected"`
	ClusterScore *score `json:"clusterScore"`
}

type binding struct {
	TargetCluster string `json:"targetCluster"`
	State         string `json:"state"`
	ClusterScore  *score `json:"clusterScore"`
}

// cycleResult is what the last scheduling cycle returned.
type cycleResult struct {
	requeue      bool
	requeueAfter time.Duration
	err          error
}

// requeueAfterSeconds is the delay the scheduler's queue would wait before the next cycle: the
// asked delay, 0 for an immediate requeue, nil when the cycle asked for none.
func (r cycleResult) requeueAfterSeconds() *float64 {
	if r.err != nil || (!r.requeue && r.requeueAfter <= 0) {
		return nil
	}
	seconds := math.Round(r.requeueAfter.Seconds()*1000) / 1000
	return &seconds
}

func (h *fakeHub) verdict(
	ctx context.Context, crp *placementv1beta1.ClusterResourcePlacement, snapshotKey client.ObjectKey, last cycleResult,
) (verdict, error) {
	snapshot := &placementv1beta1.ClusterSchedulingPolicySnapshot{}
	if err := h.client.Get(ctx, snapshotKey, snapshot); err != nil {
		return verdict{}, err
	}
	stored, err := h.bindings(ctx, crp.Name)
	if err != nil {
		return verdict{}, err
	}
	v := verdict{
		Kind:                "ClusterResourcePlacement",
		Name:                crp.Name,
		Conditions:          []condition{},
		Decisions:           make([]decision, 0, len(snapshot.Status.ClusterDecisions)),
		Bindings:            make([]binding, 0, len(stored)),
		RequeueAfterSeconds: last.requeueAfterSeconds(),
	}
	if last.err != nil {
		message := last.err.Error()
		v.Error = &message
	}
	scheduled := meta.FindStatusCondition(snapshot.Status.Conditions, string(placementv1beta1.PolicySnapshotScheduled))
	if scheduled != nil {
		v.Conditions = append(v.Conditions, condition{
			Type: scheduled.Type, Status: string(scheduled.Status), Reason: scheduled.Reason,
		})
	}
	for _, d := range snapshot.Status.ClusterDecisions {
		v.Decisions = append(v.Decisions, decision{
			ClusterName: d.ClusterName, Selected: d.Selected, ClusterScore: scoreOf(d.ClusterScore),
		})
	}
	sort.SliceStable(v.Decisions, func(i, j int) bool { return v.Decisions[i].ClusterName < v.Decisions[j].ClusterName })
	for _, b := range stored {
		if b.DeletionTimestamp != nil {
			continue
		}
		v.Bindings = append(v.Bindings, binding{
			TargetCluster: b.Spec.TargetCluster,
			State:         string(b.Spec.State),
			ClusterScore:  scoreOf(b.Spec.ClusterDecision.ClusterScore),
		})
	}
	// Two bindings can target one cluster only in a hand-made case; the state orders them then.
	sort.SliceStable(v.Bindings, func(i, j int) bool {
		if v.Bindings[i].TargetCluster != v.Bindings[j].TargetCluster {
			return v.Bindings[i].TargetCluster < v.Bindings[j].TargetCluster
		}
		return v.Bindings[i].State < v.Bindings[j].State
	})
	return v, nil
}

// scoreOf reads a score without values (`clusterScore: {}`) as no score, as the contract does.
func scoreOf(s *placementv1beta1.ClusterScore) *score {
	if s == nil || (s.AffinityScore == nil && s.TopologySpreadScore == nil) {
		return nil
	}
	return &score{AffinityScore: s.AffinityScore, TopologySpreadScore: s.TopologySpreadScore}
}
