"""URLs of the example site; the sitemap is served at the root."""

from django.contrib import admin
from django.urls import include, path

from example_project.articles import views

urlpatterns = [
    path("", views.home, name="home"),
    path("about/", views.about, name="about"),
    path("articles/<slug:category>/", views.category_detail, name="category-detail"),
    path("articles/<slug:category>/<str:slug>/", views.article_detail, name="article-detail"),
    path("authors/<uuid:author>/", views.author_detail, name="author-detail"),
    path("admin/", admin.site.urls),
    path("", include("django_sitemapx.urls")),
]
