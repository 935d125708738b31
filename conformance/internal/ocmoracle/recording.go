package ocmoracle

import (
	"context"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/client-go/util/workqueue"

	clusterapiv1 "open-cluster-management.io/api/cluster/v1"
	clusterapiv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"open-cluster-management.io/ocm/pkg/placement/controllers/framework"
	"open-cluster-management.io/ocm/pkg/placement/controllers/scheduling"
)

// recordingScheduler is the upstream plugin scheduler, keeping the last result the controller got
// from it: the filter results and the scores are in the result, not in anything the controller
// writes.
type recordingScheduler struct {
	inner  scheduling.Scheduler
	result scheduling.ScheduleResult
}

var _ scheduling.Scheduler = &recordingScheduler{}

func (s *recordingScheduler) Schedule(
	ctx context.Context,
	placement *clusterapiv1beta1.Placement,
	clusters []*clusterapiv1.ManagedCluster,
) (scheduling.ScheduleResult, *framework.Status) {
	result, status := s.inner.Schedule(ctx, placement, clusters)
	s.result = result
	return result, status
}

// reset forgets the previous placement's result, so a sync that never schedules reads as such.
func (s *recordingScheduler) reset() {
	s.result = nil
}

// syncContext is what the controller's sync receives: the placement's queue key, and a queue
// that only notes whether the controller asked to requeue the placement later.
type syncContext struct {
	key      string
	recorder events.Recorder
	requeued bool
}

var _ factory.SyncContext = &syncContext{}

func (s *syncContext) Queue() workqueue.RateLimitingInterface { return &requeueNote{sync: s} }
func (s *syncContext) QueueKey() string                       { return s.key }
func (s *syncContext) Recorder() events.Recorder              { return s.recorder }

// requeueNote is the sync's queue. The controller calls only AddAfter on it during a sync; the
// delay it passes was measured against the wall clock, so the verdict times the requeue itself.
type requeueNote struct {
	workqueue.RateLimitingInterface
	sync *syncContext
}

func (q *requeueNote) AddAfter(_ any, _ time.Duration) {
	q.sync.requeued = true
}
