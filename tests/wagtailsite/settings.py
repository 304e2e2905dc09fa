"""Settings of the ``wagtail`` leg: Wagtail's apps, its URLs under ``/pages/``, two languages.

Wagtail's internationalisation is off here; the locale tests switch it on.
"""

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [
    *INSTALLED_APPS,
    "django_sitemapx.contrib.wagtail",
    "tests.wagtailsite",
    # The example's Wagtail demo (scripts/demo --wagtail): its seed command is tested here.
    "example_project.wagtail_demo",
    "wagtail.contrib.sitemaps",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
]
ROOT_URLCONF = "tests.wagtailsite.urls"
ALLOWED_HOSTS = [
    "testserver",
    "a.example",
    "b.example",
    "example.com",
    "a.localhost",
    "b.localhost",
]
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fr", "Français")]
WAGTAIL_CONTENT_LANGUAGES = LANGUAGES
WAGTAIL_I18N_ENABLED = False
WAGTAIL_SITE_NAME = "sitemapx tests"
WAGTAILADMIN_BASE_URL = "http://a.example"
