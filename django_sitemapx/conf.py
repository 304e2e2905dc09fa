"""Every ``SITEMAPX_*`` setting, with its default, read at call time.

Nothing is cached, so ``override_settings`` works in tests.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

# sitemaps.org protocol: "no more than 50,000 URLs and must be no larger than
# 50MB (52,428,800 bytes)" per sitemap file, and the same for an index.
PROTOCOL_MAX_URLS = 50_000
PROTOCOL_MAX_BYTES = 52_428_800
# "less than 2,048 characters" for a <loc>.
PROTOCOL_MAX_LOC_LENGTH = 2_047
# Per-process copies of recently served documents (SITEMAPX_CACHE_LOCAL_BYTES).
DEFAULT_CACHE_LOCAL_BYTES = 64 * 1024 * 1024


class Settings:
    """Typed access to the app's settings."""

    @property
    def LIMIT(self) -> Any:
        """Default number of URLs per sitemap page."""
        return getattr(settings, "SITEMAPX_LIMIT", PROTOCOL_MAX_URLS)

    @property
    def PROTOCOL(self) -> Any:
        """``"http"``/``"https"`` to force a scheme, ``None`` for the request's."""
        return getattr(settings, "SITEMAPX_PROTOCOL", None)

    @property
    def CHUNK_SIZE(self) -> Any:
        """Rows fetched per database round trip while streaming."""
        return getattr(settings, "SITEMAPX_CHUNK_SIZE", 2_000)

    @property
    def USE_SITES(self) -> Any:
        """Take the host from ``django.contrib.sites``; ``None`` means "if installed"."""
        return getattr(settings, "SITEMAPX_USE_SITES", None)

    @property
    def AUTODISCOVER_MODULE(self) -> Any:
        """Module name imported from every installed app at start-up."""
        return getattr(settings, "SITEMAPX_AUTODISCOVER_MODULE", "sitemapx")

    @property
    def EXPORT_STORAGE(self) -> Any:
        """``STORAGES`` alias ``sitemap_export`` writes to when given no destination."""
        return getattr(settings, "SITEMAPX_EXPORT_STORAGE", None)

    @property
    def SERVE_FROM_STORAGE(self) -> Any:
        """``STORAGES`` alias whose exported files the views serve instead of generating."""
        return getattr(settings, "SITEMAPX_SERVE_FROM_STORAGE", None)

    @property
    def OVERRIDES(self) -> Any:
        """Apply the editors' overrides (``models.Override``) to every document."""
        return getattr(settings, "SITEMAPX_OVERRIDES", True)

    @property
    def CACHE_ALIAS(self) -> Any:
        """Alias in ``CACHES`` holding the documents; ``None`` turns the cache off."""
        return getattr(settings, "SITEMAPX_CACHE_ALIAS", "default")

    @property
    def CACHE_TIMEOUT(self) -> Any:
        """Seconds a cached document lives (``None``: until invalidated or evicted)."""
        return getattr(settings, "SITEMAPX_CACHE_TIMEOUT", 86_400)

    @property
    def CACHE_WAIT(self) -> Any:
        """Seconds a request waits for another one building the same document."""
        return getattr(settings, "SITEMAPX_CACHE_WAIT", 10.0)

    @property
    def CACHE_LOCK_TIMEOUT(self) -> Any:
        """Seconds after which a builder's lock expires (a crashed builder frees it)."""
        return getattr(settings, "SITEMAPX_CACHE_LOCK_TIMEOUT", 60)

    @property
    def CACHE_LOCAL_BYTES(self) -> Any:
        """Bytes of recent documents each process keeps in memory (0: none)."""
        return getattr(settings, "SITEMAPX_CACHE_LOCAL_BYTES", DEFAULT_CACHE_LOCAL_BYTES)

    @property
    def CACHE_CONTROL(self) -> Any:
        """``Cache-Control`` of every sitemap response; ``None`` sends none."""
        return getattr(settings, "SITEMAPX_CACHE_CONTROL", "public, max-age=300")

    @property
    def GZIP(self) -> Any:
        """List the ``.xml.gz`` documents in the index instead of the ``.xml`` ones."""
        return getattr(settings, "SITEMAPX_GZIP", False)


app_settings = Settings()
