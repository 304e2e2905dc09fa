from django.apps import AppConfig


class ArticlesConfig(AppConfig):
    name = "example_project.articles"
    label = "articles"
    default_auto_field = "django.db.models.BigAutoField"
