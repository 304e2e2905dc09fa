"""Staff clients and URL names for the admin tests."""

from __future__ import annotations

from django.contrib.auth.models import Permission, User
from django.test import Client

CHANGELIST = "admin:django_sitemapx_override_changelist"
ADD = "admin:django_sitemapx_override_add"
INSPECT = "admin:django_sitemapx_inspect"
OVERVIEW = "admin:django_sitemapx_overview"

EDITOR_PERMISSIONS = ("add_override", "change_override", "delete_override", "view_override")


def staff_client(*codenames: str) -> Client:
    """A logged-in staff user holding exactly these permissions of the app."""
    user = User.objects.create_user(f"user-{'-'.join(codenames) or 'none'}", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="django_sitemapx", codename__in=codenames
        )
    )
    client = Client()
    client.force_login(user)
    return client
