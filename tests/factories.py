"""factory-boy factories for the dashboard's models."""

import factory
from django.contrib.auth import get_user_model

from inventory.models import Hub, ManagedCluster
from placement.models import Placement

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


class HubFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Hub
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"hub-{n}")
    server_url = factory.LazyAttribute(lambda hub: f"https://{hub.name}.example.com:6443")


class ManagedClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ManagedCluster

    hub = factory.SubFactory(HubFactory)
    name = factory.Sequence(lambda n: f"cluster-{n:04d}")
    labels = factory.LazyAttribute(lambda c: {"name": c.name, "region": "us-east-1", "vendor": "OpenShift"})
    allocatable = factory.LazyFunction(lambda: {"cpu": "8", "memory": "32Gi"})
    capacity = factory.LazyFunction(lambda: {"cpu": "10", "memory": "40Gi"})
    availability = ManagedCluster.Availability.AVAILABLE


class PlacementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Placement

    hub = factory.SubFactory(HubFactory)
    kind = Placement.Kind.PLACEMENT
    namespace = "default"
    name = factory.Sequence(lambda n: f"placement-{n}")
    spec = factory.LazyFunction(lambda: {"numberOfClusters": 2})
