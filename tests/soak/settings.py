"""Settings of the soak test's child processes: the test settings, with small pages.

Pages of at most ``SITEMAPX_LIMIT`` rows make a few hundred articles dozens of
pages, so the writers' saves split, merge and move pages all the time, as
millions of rows do in production. ``DATABASE_URL`` names the test database of
the pytest process (``test_<name>``), ``CACHE_URL`` its Redis database.
"""

from tests.settings import *  # noqa: F403

SITEMAPX_LIMIT = 20
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"soak": {"format": "%(process)d %(name)s %(levelname)s %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "soak"}},
    # Errors only: a 500's traceback, the app's own errors (a page cut at its limit).
    "loggers": {
        "django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
        "django_sitemapx": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
    },
}
