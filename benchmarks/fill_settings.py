"""Settings for ``fill_report.py``: five languages, its own URLconf, nothing cached."""

from benchmarks.settings import *  # noqa: F403

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
    ("pt-br", "Português"),
]
ROOT_URLCONF = "benchmarks.fill_urls"
# Every request builds its document: the report measures the pages themselves.
SITEMAPX_CACHE_ALIAS = None
SITEMAPX_OVERRIDES = False
