"""Every ``SITEMAPX_*`` setting, with its default, read at call time.

Nothing is cached, so ``override_settings`` works in tests. Nothing is
validated here either: ``checks`` reports a bad value when ``manage.py
check`` (or ``runserver``) runs, so each property returns the setting as given,
typed as what a valid value is.
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

# Rows a source reads per database round trip and hands on as one chunk, which
# the overrides and the image and video queries then take in one query each.
# Read as conf.CHUNK_SIZE (at call time), so a test can shrink it.
CHUNK_SIZE = 2_000

# Per-process copies of recently served documents (SITEMAPX_CACHE_LOCAL_BYTES).
DEFAULT_CACHE_LOCAL_BYTES = 64 * 1024 * 1024

# Documents built at once per cache (SITEMAPX_CACHE_BUILDS): a crawler asking
# for every cold page at once gets this many database readers, the rest wait.
DEFAULT_CACHE_BUILDS = 4
# Hosts matched only by a wildcard of ALLOWED_HOSTS that get documents (SITEMAPX_WILDCARD_HOSTS).
DEFAULT_WILDCARD_HOSTS = 10

PREFIX = "SITEMAPX_"

# IndexNow (indexnow.org/documentation): "up to 10,000 URLs per post"; a key is
# 8 to 128 characters of a-z, A-Z, 0-9 and "-".
INDEXNOW_MAX_URLS = 10_000
INDEXNOW_KEY_PATTERN = r"[a-zA-Z0-9-]{8,128}"
DEFAULT_INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"
DEFAULT_ROBOTS_RULES = "User-agent: *\nDisallow:\n"
# The longest SITEMAPX_XML_STYLESHEET (check E601): its instruction must fit in the
# bytes a page keeps for its frame (sources.base.DOCUMENT_FRAME_BYTES).
XML_STYLESHEET_MAX_LENGTH = 1_024


class Settings:
    """Typed access to the app's settings; ``SETTING`` reads ``SITEMAPX_SETTING``."""

    @property
    def LIMIT(self) -> int:
        """The most URLs a page holds, for sources that set no ``limit``."""
        value: int = getattr(settings, "SITEMAPX_LIMIT", PROTOCOL_MAX_URLS)
        return value

    @property
    def PROTOCOL(self) -> str | None:
        """``"http"``/``"https"`` to force a scheme, ``None`` for the request's."""
        value: str | None = getattr(settings, "SITEMAPX_PROTOCOL", None)
        return value

    @property
    def USE_SITES(self) -> bool | None:
        """Take the host from ``django.contrib.sites``; ``None`` means "if installed"."""
        value: bool | None = getattr(settings, "SITEMAPX_USE_SITES", None)
        return value

    @property
    def OVERRIDES(self) -> bool:
        """Apply the editors' overrides (``models.Override``) to every document."""
        value: bool = getattr(settings, "SITEMAPX_OVERRIDES", True)
        return value

    @property
    def EXPORT_STORAGE(self) -> str | None:
        """``STORAGES`` alias ``sitemap_export`` writes to when given no destination."""
        value: str | None = getattr(settings, "SITEMAPX_EXPORT_STORAGE", None)
        return value

    @property
    def SERVE_FROM_STORAGE(self) -> str | None:
        """``STORAGES`` alias whose exported files the views serve instead of generating."""
        value: str | None = getattr(settings, "SITEMAPX_SERVE_FROM_STORAGE", None)
        return value

    @property
    def INDEX_LINKS_GZIP(self) -> bool:
        """The index links to the ``.xml.gz`` pages instead of the ``.xml`` ones."""
        value: bool = getattr(settings, "SITEMAPX_INDEX_LINKS_GZIP", False)
        return value

    @property
    def HTTP_CACHE_CONTROL(self) -> str | None:
        """The ``Cache-Control`` header of every sitemap response; ``None`` sends none."""
        value: str | None = getattr(settings, "SITEMAPX_HTTP_CACHE_CONTROL", "public, max-age=300")
        return value

    @property
    def X_ROBOTS_TAG(self) -> str | None:
        """The ``X-Robots-Tag`` header of every sitemap response; ``None`` sends none.

        It applies to the sitemap file only, never to the URLs it lists.
        """
        value: str | None = getattr(settings, "SITEMAPX_X_ROBOTS_TAG", "noindex")
        return value

    @property
    def CACHE_ALIAS(self) -> str | None:
        """Alias in ``CACHES`` holding the documents; ``None`` turns the cache off."""
        value: str | None = getattr(settings, "SITEMAPX_CACHE_ALIAS", "default")
        return value

    @property
    def CACHE_TIMEOUT(self) -> float | None:
        """Seconds a cached document lives (``None``: until invalidated or evicted)."""
        value: float | None = getattr(settings, "SITEMAPX_CACHE_TIMEOUT", 86_400)
        return value

    @property
    def CACHE_WAIT(self) -> float:
        """Seconds a request waits for another one building the same document."""
        value: float = getattr(settings, "SITEMAPX_CACHE_WAIT", 10.0)
        return value

    @property
    def CACHE_LOCAL_BYTES(self) -> int:
        """Bytes of recent documents each process keeps in memory (0: none)."""
        value: int = getattr(settings, "SITEMAPX_CACHE_LOCAL_BYTES", DEFAULT_CACHE_LOCAL_BYTES)
        return value

    @property
    def CACHE_PART_BYTES(self) -> int | None:
        """Bytes of one stored part of a document; ``None``: 512 KiB on Memcached, else
        no parts (a document is one entry); 0: no parts whatever the backend."""
        value: int | None = getattr(settings, "SITEMAPX_CACHE_PART_BYTES", None)
        return value

    @property
    def CACHE_STORE_THREAD(self) -> bool:
        """Whether built documents are stored off the request, by a thread of each process,
        on Redis and Memcached (``serving.background``); False: in the request."""
        value: bool = getattr(settings, "SITEMAPX_CACHE_STORE_THREAD", True)
        return value

    @property
    def CACHE_BUILDS(self) -> int:
        """The most documents built at once, for every process sharing the cache (0: no bound)."""
        value: int = getattr(settings, "SITEMAPX_CACHE_BUILDS", DEFAULT_CACHE_BUILDS)
        return value

    @property
    def CACHE_BUILD_WAIT(self) -> float:
        """Seconds a request waits for a build slot before it is answered 503."""
        value: float = getattr(settings, "SITEMAPX_CACHE_BUILD_WAIT", 5.0)
        return value

    @property
    def WILDCARD_HOSTS(self) -> int:
        """Hosts let in only by a wildcard of ``ALLOWED_HOSTS`` served at once (others: 404)."""
        value: int = getattr(settings, "SITEMAPX_WILDCARD_HOSTS", DEFAULT_WILDCARD_HOSTS)
        return value

    @property
    def HOSTS(self) -> list[str] | None:
        """The hosts the site serves; ``None``: the Sites framework's, else ``ALLOWED_HOSTS``'."""
        value: list[str] | None = getattr(settings, "SITEMAPX_HOSTS", None)
        return value

    @property
    def LANGUAGE_HOSTS(self) -> dict[str, str] | None:
        """Language code to the served host its versions live on (a domain per country)."""
        value: dict[str, str] | None = getattr(settings, "SITEMAPX_LANGUAGE_HOSTS", None)
        return value

    @property
    def FILES_BASE_URL(self) -> str | None:
        """Where exported files are served (a CDN), if not at the site's own URLs."""
        value: str | None = getattr(settings, "SITEMAPX_FILES_BASE_URL", None)
        return value

    @property
    def ROBOTS_RULES(self) -> str:
        """The rules ``robots.txt`` serves before its ``Sitemap`` line."""
        value: str = getattr(settings, "SITEMAPX_ROBOTS_RULES", DEFAULT_ROBOTS_RULES)
        return value

    @property
    def INDEXNOW_KEY(self) -> str | None:
        """The IndexNow key; ``None`` (the default) leaves IndexNow off."""
        value: str | None = getattr(settings, "SITEMAPX_INDEXNOW_KEY", None)
        return value

    @property
    def INDEXNOW_ENDPOINT(self) -> str:
        """The URL changed URLs are POSTed to."""
        value: str = getattr(settings, "SITEMAPX_INDEXNOW_ENDPOINT", DEFAULT_INDEXNOW_ENDPOINT)
        return value

    @property
    def INDEXNOW_TASK_BACKEND(self) -> str | None:
        """``TASKS`` alias submissions are enqueued on; ``None``: the cron command only."""
        value: str | None = getattr(settings, "SITEMAPX_INDEXNOW_TASK_BACKEND", "default")
        return value

    @property
    def XML_STYLESHEET(self) -> str | None:
        """A CSS stylesheet the XML documents link to, for people who open them; ``None``: none.

        A URL, a path from the site's root, or a static file's name
        (``"django_sitemapx/sitemap.css"``, the one shipped).
        """
        value: str | None = getattr(settings, "SITEMAPX_XML_STYLESHEET", None)
        return value

    @property
    def AUDIT_TASK_BACKEND(self) -> str:
        """``TASKS`` alias the audit task (``audit.tasks``) is declared on."""
        value: str = getattr(settings, "SITEMAPX_AUDIT_TASK_BACKEND", "default")
        return value

    @property
    def EXPORT_TASK_BACKEND(self) -> str:
        """``TASKS`` alias the tasks of an export split over workers are enqueued on."""
        value: str = getattr(settings, "SITEMAPX_EXPORT_TASK_BACKEND", "default")
        return value

    @property
    def EXPORT_LEASE(self) -> float:
        """Seconds without a heartbeat after which an export task's worker is taken as dead."""
        value: float = getattr(settings, "SITEMAPX_EXPORT_LEASE", 300)
        return value

    @property
    def EXPORT_DEBOUNCE(self) -> float:
        """Seconds ``schedule_export`` waits for more changes before exporting."""
        value: float = getattr(settings, "SITEMAPX_EXPORT_DEBOUNCE", 60)
        return value

    @property
    def EXPORT_ON_CHANGE(self) -> dict[str, Any] | None:
        """Export what changed after each change, debounced: ``export_changed``'s arguments."""
        value: dict[str, Any] | None = getattr(settings, "SITEMAPX_EXPORT_ON_CHANGE", None)
        return value

    @property
    def EXPORT_SPLICE(self) -> bool:
        """Log each saved row's key and export model pages in blocks, for spliced pages.

        Off (the default), saves write no log and exports record no blocks.
        """
        value: bool = getattr(settings, "SITEMAPX_EXPORT_SPLICE", False)
        return value

    @property
    def EXPORT_SPARES(self) -> bool:
        """Keep a spare of each page made in blocks in a folder, for its next splice.

        The spare is the file a spliced page replaced, or a copy of a page
        written whole. On (the default), the next splice writes over that spare
        instead of a copy of the page's file; off, no spare is kept, and on a
        file system that shares no blocks (ext4) the folder takes no room for them.
        """
        value: bool = getattr(settings, "SITEMAPX_EXPORT_SPARES", True)
        return value


# The setting names this app reads; check W002 reports any other SITEMAPX_* name.
SETTING_NAMES = frozenset(
    PREFIX + name for name, value in vars(Settings).items() if isinstance(value, property)
)

# Settings renamed before the first release, for check W002's hint.
RENAMED_SETTINGS = {
    "SITEMAPX_GZIP": "SITEMAPX_INDEX_LINKS_GZIP",
    "SITEMAPX_CACHE_CONTROL": "SITEMAPX_HTTP_CACHE_CONTROL",
}

# Settings removed before the first release, for check W002's hint: what stands
# in their place.
REMOVED_SETTINGS = {
    "SITEMAPX_CHUNK_SIZE": "sources read 2,000 rows per query.",
    "SITEMAPX_AUTODISCOVER_MODULE": "autodiscovery imports each app's sitemapx module; for "
    "another name, use SimpleSitemapxConfig and call autodiscover_modules() yourself.",
    "SITEMAPX_CACHE_LOCK_TIMEOUT": "a build lock expires after six times SITEMAPX_CACHE_WAIT.",
    "SITEMAPX_INDEXNOW_RETRIES": "a batch is retried 3 times, 2, 4 and 8 seconds apart.",
    "SITEMAPX_INDEXNOW_BACKOFF": "a batch is retried 3 times, 2, 4 and 8 seconds apart.",
    "SITEMAPX_INDEXNOW_TIMEOUT": "each IndexNow POST may take 10 seconds.",
}

app_settings = Settings()


def language_codes() -> list[str]:
    """The codes of Django's ``LANGUAGES``: a multilingual source's default languages."""
    return [code for code, _name in settings.LANGUAGES]


def default_language() -> str:
    """Django's ``LANGUAGE_CODE``: what ``x_default = True`` points to."""
    code: str = settings.LANGUAGE_CODE
    return code
