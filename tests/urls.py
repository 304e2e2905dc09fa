from django.urls import path

from example_project.urls import urlpatterns as example_urlpatterns
from tests.views import rename_article

urlpatterns = [
    path("test-only/articles/<int:pk>/rename/", rename_article),
    *example_urlpatterns,
]
