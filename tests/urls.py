from example_project.urls import urlpatterns

__all__ = ["urlpatterns"]
