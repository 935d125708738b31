package fleetoracle

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/kubefleet-dev/kubefleet/apis/cluster/v1beta1"
)

const (
	// initialMargin is the least time left in the clock window for a run to start in it; a run
	// that overran the window raises the margin to twice that run's length, up to maxMargin (past
	// it, a fresh window would never leave enough time).
	initialMargin = 20 * time.Millisecond
	maxMargin     = 500 * time.Millisecond
	// maxRuns bounds the repeats of a case too slow to fit in its window; the last run's answer is
	// kept, exact unless a heartbeat or health transition sits on the very second of a timeout.
	maxRuns = 4
)

// clockWindow maps the real clock onto the case's time: the case's timestamps are moved forward by
// shift, so the real instant t reads as the case instant t - shift.
type clockWindow struct {
	start time.Time
	// end is the case's `now` rounded up to a whole second: with whole-second timestamps, every
	// case instant in (end - 1s, end] compares with them as `now` itself does.
	end      time.Time
	shift    time.Duration
	headroom time.Duration
}

func newClockWindow(now, real time.Time) clockWindow {
	end := now.Truncate(time.Second)
	if end.Before(now) {
		end = end.Add(time.Second)
	}
	// The smallest whole-second shift that puts real - shift at or before end.
	ahead := real.Sub(end)
	shift := ahead.Truncate(time.Second)
	if shift < ahead {
		shift += time.Second
	}
	return clockWindow{start: real, end: end, shift: shift, headroom: shift - ahead}
}

// holds tells whether the real instant t still reads as a case instant inside the window.
func (w clockWindow) holds(t time.Time) bool {
	return !t.Add(-w.shift).After(w.end)
}

// shiftMemberCluster moves every timestamp of a member cluster's status (the ones the eligibility
// checker compares with the clock, and the observation times beside them) by shift.
func shiftMemberCluster(cluster *clusterv1beta1.MemberCluster, shift time.Duration) {
	shiftConditions(cluster.Status.Conditions, shift)
	for i := range cluster.Status.AgentStatus {
		agent := &cluster.Status.AgentStatus[i]
		agent.LastReceivedHeartbeat = shiftTime(agent.LastReceivedHeartbeat, shift)
		shiftConditions(agent.Conditions, shift)
	}
	usage := &cluster.Status.ResourceUsage
	usage.ObservationTime = shiftTime(usage.ObservationTime, shift)
	for name, property := range cluster.Status.Properties {
		property.ObservationTime = shiftTime(property.ObservationTime, shift)
		cluster.Status.Properties[name] = property
	}
}

func shiftConditions(conditions []metav1.Condition, shift time.Duration) {
	for i := range conditions {
		conditions[i].LastTransitionTime = shiftTime(conditions[i].LastTransitionTime, shift)
	}
}

// shiftTime keeps an unset time unset, so it still reads as absent (JSON null) on the hub.
func shiftTime(t metav1.Time, shift time.Duration) metav1.Time {
	if t.IsZero() {
		return t
	}
	return metav1.NewTime(t.Add(shift))
}
