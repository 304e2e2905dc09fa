from django.urls import path

from example_project.urls import urlpatterns as example_urlpatterns
from tests import views

urlpatterns = [
    path("test-only/articles/<int:pk>/rename/", views.rename_article),
    path("audit/fine/", views.audit_page, name="audit-fine"),
    path("audit/also-fine/", views.audit_page, name="audit-also-fine"),
    path("audit/gone/", views.audit_gone, name="audit-gone"),
    path("audit/moved/", views.audit_moved, name="audit-moved"),
    path("audit/header-noindex/", views.audit_header_noindex, name="audit-header-noindex"),
    path(
        "audit/meta-noindex/",
        views.audit_page,
        {"head": '<meta name="robots" content="noindex, follow">', "title": "Meta"},
        name="audit-meta-noindex",
    ),
    path(
        "audit/canonical/",
        views.audit_page,
        {"head": '<link rel="canonical" href="/audit/fine/">', "title": "Copy"},
        name="audit-canonical",
    ),
    path("audit/private/page/", views.audit_page, name="audit-private"),
    path("audit/counted/", views.audit_writes, name="audit-counted"),
    path("audit/streamed/", views.audit_streamed, name="audit-streamed"),
    *example_urlpatterns,
]
