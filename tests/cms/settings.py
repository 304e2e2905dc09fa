"""Settings of the ``cms`` leg: Wagtail and django CMS installed, each with its sitemap.

``scripts/test`` runs ``tests/cms`` with them (``SITEMAPX_TEST_LEGS=cms``); the
packages are the ``test-cms`` extra, never runtime dependencies. Both live in one
project, as a site running both would: their models, migrations and URLs.
"""

from tests.settings import *  # noqa: F403
from tests.settings import BASE_DIR, INSTALLED_APPS, TEMPLATES

INSTALLED_APPS = [
    *INSTALLED_APPS,
    # django CMS
    "cms",
    "menus",
    "treebeard",
    "sekizai",
    # Wagtail
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

TEMPLATES = [
    {
        **TEMPLATES[0],
        "DIRS": [*TEMPLATES[0]["DIRS"], BASE_DIR / "tests" / "cms" / "templates"],
        "OPTIONS": {
            "context_processors": [
                *TEMPLATES[0]["OPTIONS"]["context_processors"],
                "sekizai.context_processors.sekizai",
                "cms.context_processors.cms_settings",
            ]
        },
    }
]
ROOT_URLCONF = "tests.cms.urls"
ALLOWED_HOSTS = ["testserver", "example.com", "a.example", "b.example"]

CMS_CONFIRM_VERSION4 = True
CMS_TEMPLATES = [("page.html", "Page")]
WAGTAIL_SITE_NAME = "sitemapx tests"
WAGTAILADMIN_BASE_URL = "http://a.example"
