"""Benchmark settings for the multilingual comparison: five languages, the i18n URLconf."""

from benchmarks.settings import *  # noqa: F403

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
    ("pt-br", "Português"),
]
ROOT_URLCONF = "benchmarks.i18n_urls"
# Cold documents: nothing cached, every request builds its document.
SITEMAPX_CACHE_ALIAS = None
SITEMAPX_OVERRIDES = False
