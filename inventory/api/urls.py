"""REST API routes of the inventory: hubs, clusters, sets, bindings, scores, syncs, roles, audit."""

from rest_framework.routers import SimpleRouter

from inventory.api import views

app_name = "inventory-api"

router = SimpleRouter()
router.register("hubs", views.HubViewSet, basename="hub")
router.register("clusters", views.ClusterViewSet, basename="cluster")
router.register("cluster-sets", views.ClusterSetViewSet, basename="cluster-set")
router.register("cluster-set-bindings", views.ClusterSetBindingViewSet, basename="cluster-set-binding")
router.register("addon-placement-scores", views.AddOnPlacementScoreViewSet, basename="addon-placement-score")
router.register("sync-runs", views.SyncRunViewSet, basename="sync-run")
router.register("rejected-objects", views.RejectedObjectViewSet, basename="rejected-object")
router.register("cluster-set-roles", views.ClusterSetRoleViewSet, basename="cluster-set-role")
router.register("namespace-roles", views.NamespaceRoleViewSet, basename="namespace-role")
router.register("audit", views.AuditEntryViewSet, basename="audit-entry")

urlpatterns = router.urls
