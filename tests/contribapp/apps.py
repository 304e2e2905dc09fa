from django.apps import AppConfig


class ContribAppConfig(AppConfig):
    name = "tests.contribapp"
    label = "contribapp"
    default_auto_field = "django.db.models.BigAutoField"
