package fleetoracle

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1beta1 "github.com/kubefleet-dev/kubefleet/apis/cluster/v1beta1"
	placementv1beta1 "github.com/kubefleet-dev/kubefleet/apis/placement/v1beta1"
	"github.com/kubefleet-dev/kubefleet/pkg/scheduler/framework"
	"github.com/kubefleet-dev/kubefleet/pkg/scheduler/profile"
	"github.com/kubefleet-dev/kubefleet/pkg/scheduler/queue"
	"github.com/kubefleet-dev/kubefleet/pkg/utils/controller"
	"github.com/kubefleet-dev/kubefleet/pkg/utils/resource"
)

// maxCycles bounds the scheduling cycles run for one placement. A cycle asks for an immediate
// requeue only while topology spreading picks one cluster at a time, so a case of n clusters needs at
// most n+1 cycles; generated cases stay far below the bound.
const maxCycles = 100

var (
	scheme = newScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	// The framework logs every cycle through klog and the fake client through controller-runtime;
	// stdout carries the results and stderr must stay readable, so both loggers are silenced.
	klog.SetLogger(logr.Discard())
	ctrllog.SetLogger(logr.Discard())
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// fakeManager is the controller manager the framework asks for its clients and event recorder;
// everything else a manager does (informers, leader election) the framework never calls.
type fakeManager struct {
	manager.Manager
	client client.Client
}

func (m fakeManager) GetClient() client.Client    { return m.client }
func (m fakeManager) GetAPIReader() client.Reader { return m.client }

// GetEventRecorderFor returns a recorder without an event channel, which drops events.
func (m fakeManager) GetEventRecorderFor(string) record.EventRecorder { return &record.FakeRecorder{} }

// fakeHub is one hub for the whole case: the placements share its member clusters.
type fakeHub struct {
	client    client.Client
	framework framework.Framework
}

// newFakeHub loads copies of the case's clusters (timestamps shifted) and bindings into a fake client.
func newFakeHub(decoded *hub, shift time.Duration) (hub *fakeHub, err error) {
	objects := make([]client.Object, 0, len(decoded.clusters)+len(decoded.bindings))
	seen := map[string]bool{}
	for _, original := range decoded.clusters {
		cluster := original.DeepCopy()
		shiftMemberCluster(cluster, shift)
		prepareStored(cluster, placementv1beta1.MemberClusterFinalizer)
		objects = append(objects, cluster)
	}
	for _, original := range decoded.bindings {
		binding := original.DeepCopy()
		prepareStored(binding, placementv1beta1.SchedulerBindingCleanupFinalizer)
		objects = append(objects, binding)
	}
	for _, object := range objects {
		key := fmt.Sprintf("%T/%s", object, object.GetName())
		if seen[key] {
			return nil, fmt.Errorf("two %T objects named %q", object, object.GetName())
		}
		seen[key] = true
	}
	// The fake client's builder panics on an object it cannot store; a case is refused instead.
	defer func() {
		if refused := recover(); refused != nil {
			hub, err = nil, fmt.Errorf("the hub refused the case: %v", refused)
		}
	}()
	fakeClient := fake.NewClientBuilder().
		WithScheme(scheme).
		// The plain tracker: the scheduler never applies server-side, and tracking managed fields
		// costs a third of a case's time.
		WithObjectTracker(testing.NewObjectTracker(scheme, codecs.UniversalDecoder())).
		WithStatusSubresource(&placementv1beta1.ClusterSchedulingPolicySnapshot{},
			&placementv1beta1.ClusterResourceBinding{}, &clusterv1beta1.MemberCluster{}).
		WithObjects(objects...).
		Build()
	fw := framework.NewFramework(profile.NewDefaultProfile(), fakeManager{client: fakeClient})
	return &fakeHub{client: fakeClient, framework: fw}, nil
}

// prepareStored makes a case object storable as the API server holds it: the server assigns the
// resource version, and an object being deleted still exists only while a finalizer holds it (the
// one its owning controller adds is assumed when the case gives none).
func prepareStored(object client.Object, finalizer string) {
	object.SetResourceVersion("")
	if object.GetDeletionTimestamp() != nil && len(object.GetFinalizers()) == 0 {
		object.SetFinalizers([]string{finalizer})
	}
}

// schedule creates the placement's first policy snapshot, as the CRP controller does, and runs
// scheduling cycles for as long as the last one asks the queue for an immediate requeue: without an
// outside event (a cluster or placement change) that is when the real scheduler stops too.
func (h *fakeHub) schedule(crp *placementv1beta1.ClusterResourcePlacement) (verdict, time.Duration, error) {
	ctx := context.Background()
	policy := crp.Spec.Policy.DeepCopy()
	// The controller hashes the policy without numberOfClusters, which it keeps in an annotation.
	policy.NumberOfClusters = nil
	policyHash, err := resource.HashOf(policy)
	if err != nil {
		return verdict{}, 0, err
	}
	snapshot := controller.BuildPolicySnapshot(crp, 0, policyHash)
	if err := h.client.Create(ctx, snapshot); err != nil {
		return verdict{}, 0, fmt.Errorf("creating the policy snapshot of %s: %w", crp.Name, err)
	}
	key := queue.PlacementKey(crp.Name)
	var elapsed time.Duration
	var result cycleResult
	for range maxCycles {
		latest := &placementv1beta1.ClusterSchedulingPolicySnapshot{}
		if err := h.client.Get(ctx, client.ObjectKeyFromObject(snapshot), latest); err != nil {
			return verdict{}, 0, err
		}
		start := time.Now()
		res, cycleErr := h.framework.RunSchedulingCycleFor(ctx, key, latest)
		elapsed += time.Since(start)
		result = cycleResult{requeue: res.Requeue, requeueAfter: res.RequeueAfter, err: cycleErr}
		if cycleErr != nil || !result.requeue || result.requeueAfter > 0 {
			break
		}
	}
	v, err := h.verdict(ctx, crp, client.ObjectKeyFromObject(snapshot), result)
	return v, elapsed, err
}

func (h *fakeHub) bindings(ctx context.Context, placement string) ([]placementv1beta1.ClusterResourceBinding, error) {
	list := &placementv1beta1.ClusterResourceBindingList{}
	if err := h.client.List(ctx, list, client.MatchingLabels{placementv1beta1.PlacementTrackingLabel: placement}); err != nil {
		return nil, err
	}
	return list.Items, nil
}
