"""Django app config of the hub inventory."""

from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = "Hub inventory"
