"""Receivers: Wagtail's page events invalidate the pages they change, and feed IndexNow.

Publishing, unpublishing, moving, renaming (a slug change) or deleting a page
invalidates, on every host listing it, the page of the section holding it
(and those holding its translations, whose alternates name it); a move or a
slug change moves its descendants' URLs too, and invalidates their pages. A
saved or deleted Wagtail ``Site`` or view restriction can change any URL:
the whole section. With ``SITEMAPX_INDEXNOW_KEY`` set, the page's URLs before
and after are queued for IndexNow.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import router, transaction

from ...exceptions import Skip
from ...indexnow import queue_urls
from ...invalidation import invalidate
from ...locations import LocationBuilder, Origin
from ...locations.origins import scheme_for
from ...registry import SitemapRegistry, default_registry
from .sources import WagtailPageSource, page_model

# More pages than this moved at once (a subtree): the whole section is invalidated.
MOST_KEYS = 100


def wagtail_sources(registry: SitemapRegistry | None = None) -> list[WagtailPageSource]:
    """Every registered ``WagtailPageSource``."""
    return [
        source for source in registry or default_registry if isinstance(source, WagtailPageSource)
    ]


def site_origins(source: WagtailPageSource) -> list[Origin]:
    """The origin of each Wagtail ``Site``'s host, as requests for it are spelled."""
    from wagtail.models import Site

    origins = []
    for hostname, port in Site.objects.order_by("pk").values_list("hostname", "port"):
        scheme = scheme_for(source.protocol, "https" if port == 443 else "http")
        default = 443 if scheme == "https" else 80
        host = hostname if port in (default, 80, 443) else f"{hostname}:{port}"
        origins.append(Origin(scheme, host.lower()))
    return origins


def pages_changed(
    pages: Iterable[tuple[Any, str]],
    url_paths: Iterable[str] = (),
    *,
    registry: SitemapRegistry | None = None,
) -> None:
    """Invalidate the pages holding ``pages`` on the hosts listing them, once committed.

    ``pages`` are ``(key, tree path)`` pairs, read when the event happens (a
    deleted page's are gone at commit). ``url_paths`` are Wagtail ``url_path``
    values whose URLs changed (before and after an event): their URLs on
    every host go to IndexNow.
    """
    pages = list(dict.fromkeys(pages))
    url_paths = list(dict.fromkeys(url_paths))
    sources = wagtail_sources(registry)
    if not sources:
        return
    urls: list[str] = []
    for source in sources:
        for bound in _bound(source):
            assert bound.tree is not None and bound.origin is not None
            builder = LocationBuilder(bound.origin)
            for url_path in url_paths:
                path = bound.tree.location(url_path)
                if path is not None:
                    try:
                        urls.append(builder.absolute(path))
                    except Skip:
                        continue
    queue_urls(dict.fromkeys(urls))

    def run() -> None:
        for source in sources:
            _invalidate(source, pages)

    transaction.on_commit(run, using=router.db_for_write(page_model()))


def _bound(source: WagtailPageSource) -> list[WagtailPageSource]:
    """``source`` bound to each Wagtail site's host it is served on."""
    found = []
    for origin in site_origins(source):
        bound = source.for_origin(origin)
        assert isinstance(bound, WagtailPageSource)
        if bound.tree is not None:
            found.append(bound)
    return found


def _invalidate(source: WagtailPageSource, pages: list[tuple[Any, str]]) -> None:
    if not pages:
        return
    if len(pages) > MOST_KEYS:
        invalidate(source.section)
        return
    places: set[tuple[Origin, int]] = set()
    for bound in _bound(source):
        assert bound.tree is not None and bound.origin is not None
        table = bound.page_table()
        for key, path in pages:
            if not bound.tree.holds(path):
                continue
            number = table.page_of(key)
            if number is None:  # before the host's first count: nothing stored to keep
                continue
            places.add((bound.origin, number))
    for origin, number in sorted(places, key=lambda place: (place[0].host, place[1])):
        # That host's page and index only: each host's pages are its own, named per host.
        # invalidate() marks the host's own rows of the page table too.
        invalidate(source.section, number, origin=origin)


def section_changed(registry: SitemapRegistry | None = None) -> None:
    """Invalidate every Wagtail section once committed (a site or a restriction changed)."""
    sources = wagtail_sources(registry)

    def run() -> None:
        for source in sources:
            invalidate(source.section)

    transaction.on_commit(run, using=router.db_for_write(page_model()))


def _translations(page: Any) -> list[tuple[Any, str]]:
    """``(key, path)`` of ``page``'s translations (their alternates name it)."""
    from .sources import i18n_enabled

    if not i18n_enabled():
        return []
    return list(
        page_model()
        ._default_manager.filter(translation_key=page.translation_key)
        .exclude(pk=page.pk)
        .values_list("pk", "path")
    )


def _subtree(page: Any) -> tuple[list[tuple[Any, str]], list[str]]:
    """``(key, path)`` and url_paths of ``page``'s descendants (at most ``MOST_KEYS`` + 1)."""
    rows = list(
        page_model()
        ._default_manager.filter(path__startswith=page.path, depth__gt=page.depth)
        .order_by("path")
        .values_list("pk", "path", "url_path")[: MOST_KEYS + 1]
    )
    return [(key, path) for key, path, _ in rows], [url_path for _, _, url_path in rows]


def page_published(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A page was published: its page and its translations' pages."""
    pages_changed([(instance.pk, instance.path), *_translations(instance)], [instance.url_path])


def page_unpublished(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A page was unpublished: its page and its translations' pages."""
    pages_changed([(instance.pk, instance.path), *_translations(instance)], [instance.url_path])


def page_moved(
    sender: Any,
    instance: Any,
    url_path_before: str = "",
    url_path_after: str = "",
    **kwargs: Any,
) -> None:
    """A page was moved: its page, its descendants' and its translations' pages."""
    keys, paths = _subtree(instance)
    befores = [url_path_before + path[len(url_path_after) :] for path in paths]
    pages_changed(
        [(instance.pk, instance.path), *keys, *_translations(instance)],
        [url_path_before, url_path_after, *befores, *paths],
    )


def page_slug_changed(sender: Any, instance: Any, instance_before: Any, **kwargs: Any) -> None:
    """A live page's slug changed: its descendants' URLs changed with it."""
    keys, paths = _subtree(instance)
    before = instance_before.url_path
    after = instance.url_path
    befores = [before + path[len(after) :] for path in paths]
    pages_changed([(instance.pk, instance.path), *keys], [before, after, *befores, *paths])


def page_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A page row was deleted (each of a specific page's rows sends this: one is enough)."""
    if sender is not page_model():
        return
    pages_changed([(instance.pk, instance.path)], [instance.url_path] if instance.live else [])


def site_changed(sender: Any, **kwargs: Any) -> None:
    """A Wagtail ``Site`` was saved or deleted: its hostname, port or root may have changed."""
    section_changed()


def restriction_changed(sender: Any, **kwargs: Any) -> None:
    """A view restriction was saved or deleted: pages under it appear or go."""
    section_changed()


def connect() -> None:
    """Connect the receivers to Wagtail's signals and models (``apps.py`` calls it)."""
    from django.db.models.signals import post_delete, post_save
    from wagtail import signals
    from wagtail.models import PageViewRestriction, Site

    signals.page_published.connect(page_published, dispatch_uid="sitemapx.wagtail.published")
    signals.page_unpublished.connect(page_unpublished, dispatch_uid="sitemapx.wagtail.unpublished")
    signals.post_page_move.connect(page_moved, dispatch_uid="sitemapx.wagtail.moved")
    signals.page_slug_changed.connect(page_slug_changed, dispatch_uid="sitemapx.wagtail.slug")
    post_delete.connect(page_deleted, dispatch_uid="sitemapx.wagtail.deleted")
    for model in (Site,):
        post_save.connect(site_changed, sender=model, dispatch_uid="sitemapx.wagtail.site_saved")
        post_delete.connect(
            site_changed, sender=model, dispatch_uid="sitemapx.wagtail.site_deleted"
        )
    post_save.connect(
        restriction_changed,
        sender=PageViewRestriction,
        dispatch_uid="sitemapx.wagtail.restriction_saved",
    )
    post_delete.connect(
        restriction_changed,
        sender=PageViewRestriction,
        dispatch_uid="sitemapx.wagtail.restriction_deleted",
    )
