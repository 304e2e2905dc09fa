"""Settings for the test suite.

``DATABASE_URL`` and ``CACHE_URL`` select the backends (SQLite and local memory
by default); ``.ci/run`` runs the suite again on PostgreSQL and Redis.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "example.com", "other.example", "127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.sitemaps",
    "django_sitemapx",
    "example_project.articles",
    "tests.testapp",
    "tests.contribapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

try:  # the Tasks framework's database backend, for the IndexNow task tests
    import django_tasks_db  # noqa: F401
except ImportError:
    pass
else:
    INSTALLED_APPS.append("django_tasks_db")

ROOT_URLCONF = "tests.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "example_project" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {"default": env.db("DATABASE_URL", default="sqlite:///:memory:")}
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

SITE_ID = 1
# django.contrib.sites is installed so tests can switch it on; by default the
# host comes from the request, as on a site without the Sites framework.
SITEMAPX_USE_SITES = False

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Django's advice for test suites: the default hasher's 1,000,000 PBKDF2 rounds cost about
# half a second per user made or logged in, in every leg; no test is about hashing.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
TIME_ZONE = "Europe/Paris"
# The example project's languages: its pages and category sections list all three.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
STATIC_URL = "static/"

# IndexNow stays off unless a test turns it on, and no test may ever reach the
# real endpoint: tests point it at their own server on 127.0.0.1 (see
# tests/support/endpoint.py), and this default refuses connections (port 9,
# discard, has no listener). tests/conftest.py also refuses any URL off the machine.
SITEMAPX_INDEXNOW_ENDPOINT = "http://127.0.0.1:9/indexnow"
