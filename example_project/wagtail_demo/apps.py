from django.apps import AppConfig


class WagtailDemoConfig(AppConfig):
    name = "example_project.wagtail_demo"
    label = "wagtail_demo"
    default_auto_field = "django.db.models.BigAutoField"
