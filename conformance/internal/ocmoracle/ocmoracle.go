// Package ocmoracle runs the upstream OCM scheduling controller on one case: the manifests become
// the objects of fake clientsets and informer stores, the controller's sync runs once per
// Placement, and the verdict is read back from what the controller wrote.
package ocmoracle

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterapiv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"open-cluster-management.io/ocm/pkg/placement/controllers/metrics"
	"open-cluster-management.io/ocm/pkg/placement/controllers/scheduling"
	"open-cluster-management.io/ocm/pkg/placement/plugins"
	"open-cluster-management.io/ocm/pkg/placement/plugins/addon"
	"open-cluster-management.io/ocm/pkg/placement/plugins/tainttoleration"

	"fleetui.local/conformance/internal/casefile"
)

// hub is the scheduling controller and everything it reads, built once per process: building the
// controller starts a work queue goroutine, so each case swaps the contents instead of the hub.
type hub struct {
	client     *caseClient
	stores     map[string]cache.Store
	scheduler  *recordingScheduler
	controller factory.Controller
	handle     plugins.Handle
	recorder   events.Recorder
}

// caseClient is the clientset the controller holds; each case puts a fresh fake clientset behind it.
type caseClient struct {
	clusterclient.Interface
}

var shared *hub

func sharedHub() *hub {
	if shared != nil {
		return shared
	}
	ctx := quietContext()
	client := &caseClient{Interface: clusterfake.NewSimpleClientset()}
	informers := clusterinformers.NewSharedInformerFactory(client, 0)
	v1, v1alpha1 := informers.Cluster().V1(), informers.Cluster().V1alpha1()
	v1beta1, v1beta2 := informers.Cluster().V1beta1(), informers.Cluster().V1beta2()
	recorder := &kevents.FakeRecorder{}
	metricsRecorder := metrics.NewScheduleMetrics(clock.RealClock{})
	handle := scheduling.NewSchedulerHandler(
		client,
		v1beta1.PlacementDecisions().Lister(),
		v1alpha1.AddOnPlacementScores().Lister(),
		v1.ManagedClusters().Lister(),
		recorder,
		metricsRecorder,
	)
	scheduler := &recordingScheduler{inner: scheduling.NewPluginScheduler(handle)}
	syncRecorder := events.NewInMemoryRecorder("placement-oracle", clock.RealClock{})
	controller := scheduling.NewSchedulingController(
		ctx, client,
		v1.ManagedClusters(), v1beta2.ManagedClusterSets(), v1beta2.ManagedClusterSetBindings(),
		v1beta1.Placements(), v1beta1.PlacementDecisions(), v1alpha1.AddOnPlacementScores(),
		scheduler,
		syncRecorder, recorder,
		metricsRecorder,
	)
	shared = &hub{
		client: client,
		stores: map[string]cache.Store{
			"ManagedCluster":           v1.ManagedClusters().Informer().GetStore(),
			"ManagedClusterSet":        v1beta2.ManagedClusterSets().Informer().GetStore(),
			"ManagedClusterSetBinding": v1beta2.ManagedClusterSetBindings().Informer().GetStore(),
			"Placement":                v1beta1.Placements().Informer().GetStore(),
			"PlacementDecision":        v1beta1.PlacementDecisions().Informer().GetStore(),
			"AddOnPlacementScore":      v1alpha1.AddOnPlacementScores().Informer().GetStore(),
		},
		scheduler:  scheduler,
		controller: controller,
		handle:     handle,
		recorder:   syncRecorder,
	}
	return shared
}

// quietContext carries a logger that drops everything: the scheduler logs plugin warnings at the
// default verbosity, and the oracle's stderr is for the oracle's own failures.
func quietContext() context.Context {
	return klog.NewContext(context.Background(), logr.Discard())
}

// Run schedules every placement of the case with the upstream controller, in input order.
func Run(c *casefile.Case) casefile.Result {
	result := casefile.Result{ID: c.ID, Placements: []any{}}
	objects, placements, err := admitAll(c)
	if err != nil {
		result.Error = err.Error()
		return result
	}
	restore := useClock(c.Now)
	defer restore()

	h := sharedHub()
	if err := h.load(objects); err != nil {
		result.Error = err.Error()
		return result
	}
	ctx := quietContext()
	for _, placement := range placements {
		key := placement.Namespace + "/" + placement.Name
		sync := &syncContext{key: key, recorder: h.recorder}
		h.scheduler.reset()
		started := time.Now()
		// a sync error is the controller's own verdict (misconfigured, failed lookups): what it
		// wrote before returning is what the verdict reads, as a requeued sync would find it
		_ = h.controller.Sync(ctx, sync)
		result.ElapsedNs += time.Since(started).Nanoseconds()
		verdict, err := h.verdict(ctx, placement, sync, c.Now)
		if err != nil {
			result.Error = err.Error()
			return result
		}
		result.Placements = append(result.Placements, verdict)
	}
	return result
}

// admitted is one object of the case with the kind its manifest named.
type admitted struct {
	kind   string
	object runtime.Object
}

// admitAll admits every manifest and lists the case's Placements in input order.
func admitAll(c *casefile.Case) ([]admitted, []*clusterapiv1beta1.Placement, error) {
	var objects []admitted
	var placements []*clusterapiv1beta1.Placement
	seen := map[string]bool{}
	for _, raw := range c.Manifests {
		object, err := admit(raw)
		if err != nil {
			return nil, nil, err
		}
		if object == nil {
			continue
		}
		kind := casefile.Kind(raw)
		key, _ := cache.MetaNamespaceKeyFunc(object)
		identity := kind + " " + key
		// an API server holds one object per name
		if seen[identity] {
			return nil, nil, fmt.Errorf("%s: already exists", identity)
		}
		seen[identity] = true
		objects = append(objects, admitted{kind, object})
		if placement, ok := object.(*clusterapiv1beta1.Placement); ok {
			placements = append(placements, placement)
		}
	}
	return objects, placements, nil
}

// load makes the case's objects the whole content of the clientset and of every informer store.
// The stores stay as loaded for the whole case, so every Placement sees the given decisions of the
// others (as Balance reads them), not the ones an earlier Placement of the case just wrote.
func (h *hub) load(objects []admitted) error {
	all := make([]runtime.Object, 0, len(objects))
	byKind := map[string][]any{}
	for _, a := range objects {
		all = append(all, a.object)
		byKind[a.kind] = append(byKind[a.kind], a.object)
	}
	h.client.Interface = clusterfake.NewSimpleClientset(all...)
	for kind, store := range h.stores {
		if err := store.Replace(byKind[kind], ""); err != nil {
			return fmt.Errorf("loading %s objects: %w", kind, err)
		}
	}
	return nil
}

// useClock points the clocks the plugins read (toleration expiry, add-on score validity) at the
// case's instant, and returns what puts the previous clocks back.
func useClock(now time.Time) func() {
	tolerationClock, addOnClock := tainttoleration.TolerationClock, addon.AddOnClock
	fake := testingclock.NewFakeClock(now)
	tainttoleration.TolerationClock, addon.AddOnClock = fake, fake
	return func() {
		tainttoleration.TolerationClock, addon.AddOnClock = tolerationClock, addOnClock
	}
}
