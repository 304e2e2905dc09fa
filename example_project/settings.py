"""Settings of the example site, read from the environment with django-environ.

Out of the box: SQLite in ``db.sqlite3`` and the local-memory cache, no server
needed. For production-like runs set ``DATABASE_URL`` (for example
``postgres://postgres@127.0.0.1:5432/test``) and ``CACHE_URL``
(``redis://127.0.0.1:6379/0``).
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env(
    DEBUG=(bool, True),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost", "[::1]", "news.localhost"]),
    MAIN_HOSTS=(list, ["127.0.0.1", "localhost", "[::1]"]),
)

DEBUG = env("DEBUG")
# Only for local runs; set SECRET_KEY in any real deployment.
SECRET_KEY = env("SECRET_KEY", default="example-project-insecure-key-for-local-runs-only")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")

# Two sites from one project (docs/guide/sites.md, articles/sitemapx.py): the
# magazine on these hosts, the news desk on news.localhost (browsers and curl
# resolve *.localhost to the loopback address).
EXAMPLE_MAIN_HOSTS = env("MAIN_HOSTS")
EXAMPLE_NEWS_HOST = env("NEWS_HOST", default="news.localhost")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_sitemapx",
    "example_project.articles",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"

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

WSGI_APPLICATION = "example_project.wsgi.application"
ASGI_APPLICATION = "example_project.asgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_sitemapx": {"handlers": ["console"], "level": "INFO"}},
}
