"""Settings of the Wagtail demo (``scripts/demo --wagtail``): the example's, with Wagtail.

Two Wagtail sites, ``a.localhost`` and ``b.localhost`` on port 8000 (browsers and
curl resolve ``*.localhost`` to the loopback address), each in English and French,
seeded by ``manage.py seed_wagtail_demo``. Its own SQLite file, so the example's
articles and the demo's pages never meet. Needs the ``wagtail`` extra.
"""

from example_project.settings import *  # noqa: F403
from example_project.settings import BASE_DIR, INSTALLED_APPS, env

ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=["a.localhost", "b.localhost", "localhost", "127.0.0.1"]
)
INSTALLED_APPS = [
    *(app for app in INSTALLED_APPS if app != "example_project.articles"),
    "django_sitemapx.contrib.wagtail",
    "example_project.wagtail_demo",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
]
ROOT_URLCONF = "example_project.wagtail_urls"
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db-wagtail.sqlite3'}")
}
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fr", "Français")]
WAGTAIL_I18N_ENABLED = True
WAGTAIL_CONTENT_LANGUAGES = LANGUAGES
WAGTAIL_SITE_NAME = "django-sitemapx Wagtail demo"
WAGTAILADMIN_BASE_URL = "http://a.localhost:8000"
