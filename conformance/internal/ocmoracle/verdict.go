package ocmoracle

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterapiv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"open-cluster-management.io/ocm/pkg/placement/controllers/scheduling"
	"open-cluster-management.io/ocm/pkg/placement/plugins/predicate"
	"open-cluster-management.io/ocm/pkg/placement/plugins/tainttoleration"
)

// verdict is the OCM verdict of the conformance contract (conformance/README.md).
type verdict struct {
	Kind                     string                      `json:"kind"`
	Namespace                string                      `json:"namespace"`
	Name                     string                      `json:"name"`
	Conditions               []condition                 `json:"conditions"`
	Feasible                 []string                    `json:"feasible"`
	Scores                   map[string]map[string]int64 `json:"scores"`
	Totals                   map[string]int64            `json:"totals"`
	Decisions                []decision                  `json:"decisions"`
	NumberOfSelectedClusters int32                       `json:"numberOfSelectedClusters"`
	DecisionGroups           []decisionGroup             `json:"decisionGroups"`
	RequeueAfterSeconds      *float64                    `json:"requeueAfterSeconds"`
}

type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

type decision struct {
	Name      string `json:"name"`
	GroupName string `json:"groupName"`
	// GroupIndex is null when the object has no integer group index label (a decision the
	// controller kept without relabelling it, as it does when it only patched the status)
	GroupIndex *int     `json:"groupIndex"`
	Clusters   []string `json:"clusters"`
}

type decisionGroup struct {
	DecisionGroupIndex int32    `json:"decisionGroupIndex"`
	DecisionGroupName  string   `json:"decisionGroupName"`
	Decisions          []string `json:"decisions"`
	ClusterCount       int32    `json:"clusterCount"`
}

// comparedConditions are the placement conditions the scheduling controller owns.
var comparedConditions = map[string]bool{
	clusterapiv1beta1.PlacementConditionMisconfigured: true,
	clusterapiv1beta1.PlacementConditionSatisfied:     true,
}

// verdict reads what the controller wrote for `placement` and what its scheduler returned.
func (h *hub) verdict(
	ctx context.Context, placement *clusterapiv1beta1.Placement, sync *syncContext, now time.Time,
) (verdict, error) {
	result := verdict{
		Kind:           "Placement",
		Namespace:      placement.Namespace,
		Name:           placement.Name,
		Conditions:     []condition{},
		Scores:         map[string]map[string]int64{},
		Totals:         map[string]int64{},
		Decisions:      []decision{},
		DecisionGroups: []decisionGroup{},
	}
	client := h.client.ClusterV1beta1()
	written, err := client.Placements(placement.Namespace).Get(ctx, placement.Name, metav1.GetOptions{})
	if err != nil {
		return result, fmt.Errorf("reading back placement %s/%s: %w", placement.Namespace, placement.Name, err)
	}
	for _, c := range written.Status.Conditions {
		if comparedConditions[c.Type] {
			result.Conditions = append(result.Conditions, condition{c.Type, string(c.Status), c.Reason})
		}
	}
	sort.Slice(result.Conditions, func(i, j int) bool { return result.Conditions[i].Type < result.Conditions[j].Type })
	result.NumberOfSelectedClusters = written.Status.NumberOfSelectedClusters
	for _, g := range written.Status.DecisionGroups {
		result.DecisionGroups = append(result.DecisionGroups, decisionGroup{
			DecisionGroupIndex: g.DecisionGroupIndex,
			DecisionGroupName:  g.DecisionGroupName,
			Decisions:          append([]string{}, g.Decisions...),
			ClusterCount:       g.ClustersCount,
		})
	}

	own := labels.SelectorFromSet(labels.Set{clusterapiv1beta1.PlacementLabel: placement.Name})
	decisions, err := client.PlacementDecisions(placement.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: own.String(),
	})
	if err != nil {
		return result, fmt.Errorf("listing decisions of %s/%s: %w", placement.Namespace, placement.Name, err)
	}
	for _, d := range decisions.Items {
		item := decision{Name: d.Name, GroupName: d.Labels[clusterapiv1beta1.DecisionGroupNameLabel], Clusters: []string{}}
		if index, err := strconv.Atoi(d.Labels[clusterapiv1beta1.DecisionGroupIndexLabel]); err == nil {
			item.GroupIndex = &index
		}
		for _, c := range d.Status.Decisions {
			item.Clusters = append(item.Clusters, c.ClusterName)
		}
		result.Decisions = append(result.Decisions, item)
	}
	sort.Slice(result.Decisions, func(i, j int) bool { return result.Decisions[i].Name < result.Decisions[j].Name })

	if scheduled := h.scheduler.result; scheduled != nil {
		result.Feasible = h.feasible(scheduled.FilterResults())
		for _, p := range scheduled.PrioritizerResults() {
			scores := map[string]int64{}
			for cluster, score := range p.Scores {
				scores[cluster] = score
			}
			result.Scores[p.Name] = scores
		}
		for cluster, total := range scheduled.PrioritizerScores() {
			result.Totals[cluster] = total
		}
	}
	if sync.requeued {
		seconds, err := h.requeueSeconds(ctx, placement, now)
		if err != nil {
			return result, err
		}
		result.RequeueAfterSeconds = &seconds
	}
	return result, nil
}

// feasible is the sorted cluster list after the whole filter pipeline, or nil when a filter
// stopped the pipeline. The scheduler records each prefix of its pipeline under the joined filter
// names; its filters are those NewPluginScheduler builds, in that order.
func (h *hub) feasible(results []scheduling.FilterResult) []string {
	pipeline := strings.Join([]string{predicate.New(h.handle).Name(), tainttoleration.New(h.handle).Name()}, ",")
	for _, r := range results {
		if r.Name == pipeline {
			clusters := append([]string{}, r.FilteredClusters...)
			sort.Strings(clusters)
			return clusters
		}
	}
	return nil
}

// requeueSeconds is the delay of the controller's requeue measured from the case's instant. The
// scheduler turns the plugins' requeue instants into a delay with the wall clock (time.Until), which
// no case can fix, so the instant is asked again from the one plugin that gives any (TaintToleration:
// the earliest expiry of a toleration that still tolerates a decided cluster), reading the same
// listers and the case's clock, and rounded to milliseconds.
func (h *hub) requeueSeconds(ctx context.Context, placement *clusterapiv1beta1.Placement, now time.Time) (float64, error) {
	requeue, _ := tainttoleration.New(h.handle).RequeueAfter(ctx, placement)
	if requeue.RequeueTime == nil {
		return 0, fmt.Errorf("placement %s/%s: the controller requeued it, but no plugin gives the instant",
			placement.Namespace, placement.Name)
	}
	delay := requeue.RequeueTime.Sub(now)
	return math.Round(float64(delay)/float64(time.Millisecond)) / 1000, nil
}
