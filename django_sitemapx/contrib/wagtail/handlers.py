"""Receivers: Wagtail's page events invalidate the pages they change, and feed IndexNow.

Publishing, unpublishing, moving, renaming (a slug change) or deleting a page
invalidates, on every host listing it, the page of the section holding it
(and those holding its translations, whose alternates name it); a move or a
slug change moves its descendants' URLs too, and invalidates their pages. A
site's hostname or port changed moves the overrides of its old host to the new
one, in the transaction of the change, and invalidates those two hosts'
documents only. Any other change of a site's (its root page, the default site,
a site added or deleted) or of a view restriction can change any URL: the whole
section. With ``SITEMAPX_INDEXNOW_KEY`` set, the page's URLs before and after
are queued for IndexNow (and those it stopped listing recorded in a
removed-pages section), less those the sitemap never lists: a draft, a page
behind a view restriction, or one an override or rule excludes on that host. A site's
new hostname or port queues every URL the site lists there (and the old
host's, while the site still serves it), once committed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import router, transaction

from ...conf import app_settings
from ...exceptions import Skip
from ...indexnow import is_enabled
from ...indexnow.handlers import active, queue_listed
from ...invalidation import invalidate
from ...locations import LocationBuilder, Origin
from ...registry import SitemapRegistry
from .announce import announce_moved_site, bound_sources, wagtail_sources
from .sites import move_overrides, site_host
from .sources import WagtailPageSource, page_model

# More pages than this moved at once (a subtree): the whole section is invalidated.
MOST_KEYS = 100

logger = logging.getLogger("django_sitemapx.indexnow")


def pages_changed(
    pages: Iterable[tuple[Any, str]],
    listed: Iterable[str] = (),
    gone: Iterable[str] = (),
    *,
    registry: SitemapRegistry | None = None,
) -> None:
    """Invalidate the pages holding ``pages`` on the hosts listing them, once committed.

    ``pages`` are ``(key, tree path)`` pairs, read when the event happens (a
    deleted page's are gone at commit). ``listed`` and ``gone`` are the Wagtail
    ``url_path`` values of live, public pages whose URLs the event changed: listed
    after it, or listed before it only (callers leave out a draft's and a page's
    behind a view restriction, see :func:`public`). Their URLs on every host go to
    IndexNow, and those gone to the removed-pages section, once committed, less
    those an override or rule of the host excludes (``queue_listed``).
    """
    pages = list(dict.fromkeys(pages))
    sources = wagtail_sources(registry)
    if not sources:
        return
    listed, gone = list(dict.fromkeys(listed)), list(dict.fromkeys(gone))
    if (listed or gone) and active():
        listed_uris, gone_uris = _uris(sources, listed), _uris(sources, gone)
        transaction.on_commit(
            lambda: queue_listed([*listed_uris, *gone_uris], gone_uris, listed_uris),
            using=router.db_for_write(page_model()),
            robust=True,
        )

    def run() -> None:
        for source in sources:
            _invalidate(source, pages)

    transaction.on_commit(run, using=router.db_for_write(page_model()))


def _uris(sources: list[WagtailPageSource], url_paths: list[str]) -> list[str]:
    """The URL of each of ``url_paths`` on every host whose site's trees hold it."""
    uris: list[str] = []
    for source in sources:
        for bound in bound_sources(source):
            assert bound.tree is not None and bound.origin is not None
            builder = LocationBuilder(bound.origin)
            for url_path in url_paths:
                path = bound.tree.location(url_path)
                if path is not None:
                    try:
                        uris.append(builder.absolute(path))
                    except Skip:
                        continue
    return list(dict.fromkeys(uris))


def restricted_url_paths() -> list[str]:
    """The ``url_path`` of each page under a view restriction (its subtree is not public).

    Read only while IndexNow or a removed-pages section listens: nothing else needs them.
    """
    if not active():
        return []
    from wagtail.models import PageViewRestriction

    return list(PageViewRestriction.objects.values_list("page__url_path", flat=True).distinct())


def public(url_paths: Iterable[str], restricted: Iterable[str]) -> list[str]:
    """``url_paths`` less those at or under a ``restricted`` one (Wagtail's url_paths end
    in ``/``, so a prefix is an ancestor)."""
    prefixes = tuple(restricted)
    return [url_path for url_path in url_paths if not url_path.startswith(prefixes)]


def _invalidate(source: WagtailPageSource, pages: list[tuple[Any, str]]) -> None:
    if not pages:
        return
    if len(pages) > MOST_KEYS:
        invalidate(source.section)
        return
    places: set[tuple[Origin, int]] = set()
    for bound in bound_sources(source):
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


def hosts_changed(hosts: Iterable[str], registry: SitemapRegistry | None = None) -> None:
    """Invalidate every Wagtail section on ``hosts`` only, once committed."""
    sources = wagtail_sources(registry)
    hosts = list(dict.fromkeys(hosts))

    def run() -> None:
        for source in sources:
            for host in hosts:
                # Only the host is read: the host's own pages and index (see invalidate()).
                invalidate(source.section, origin=Origin("https", host))

    transaction.on_commit(run, using=router.db_for_write(page_model()))


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
    """``(key, path)`` of ``page``'s descendants (at most ``MOST_KEYS`` + 1), and the
    url_paths of the live ones among them."""
    rows = list(
        page_model()
        ._default_manager.filter(path__startswith=page.path, depth__gt=page.depth)
        .order_by("path")
        .values_list("pk", "path", "url_path", "live")[: MOST_KEYS + 1]
    )
    return [(key, path) for key, path, _, _ in rows], [
        url_path for _, _, url_path, live in rows if live
    ]


def page_published(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A page was published: its page and its translations' pages."""
    listed = public([instance.url_path], restricted_url_paths())
    pages_changed([(instance.pk, instance.path), *_translations(instance)], listed)


def page_unpublished(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A page was unpublished: its page and its translations' pages."""
    gone = public([instance.url_path], restricted_url_paths())
    pages_changed([(instance.pk, instance.path), *_translations(instance)], gone=gone)


def page_moved(
    sender: Any,
    instance: Any,
    url_path_before: str = "",
    url_path_after: str = "",
    **kwargs: Any,
) -> None:
    """A page was moved: its page, its descendants' and its translations' pages."""
    keys, paths = _subtree(instance)
    pages = [(instance.pk, instance.path), *keys, *_translations(instance)]
    _moved(pages, url_path_before, url_path_after, paths, live=instance.live)


def page_slug_changed(sender: Any, instance: Any, instance_before: Any, **kwargs: Any) -> None:
    """A live page's slug changed: its descendants' URLs changed with it."""
    keys, paths = _subtree(instance)
    pages = [(instance.pk, instance.path), *keys]
    _moved(pages, instance_before.url_path, instance.url_path, paths, live=instance.live)


def _moved(
    pages: list[tuple[Any, str]], before: str, after: str, paths: list[str], *, live: bool
) -> None:
    """The page at ``before`` is at ``after`` now, with its live descendants' ``paths``."""
    afters = [after, *paths] if live else paths
    befores = [before + path[len(after) :] for path in afters]
    restricted = restricted_url_paths()
    # A restriction inside the moved subtree moved with it; one above it did not.
    restricted_before = [
        before + path[len(after) :] if after and path.startswith(after) else path
        for path in restricted
    ]
    pages_changed(pages, public(afters, restricted), public(befores, restricted_before))


def page_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A page row was deleted (each of a specific page's rows sends this: one is enough)."""
    if sender is not page_model():
        return
    gone = public([instance.url_path], restricted_url_paths()) if instance.live else []
    pages_changed([(instance.pk, instance.path)], gone=gone)


# What a site's documents depend on, read before a save (``site_saving``).
_SITE_FIELDS = ("hostname", "port", "root_page_id", "is_default_site")


def site_saving(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    """A Wagtail ``Site`` is about to be saved: keep what it was, for ``site_saved``."""
    if raw or instance.pk is None:
        return
    instance._sitemapx_before = (
        sender._default_manager.filter(pk=instance.pk).values_list(*_SITE_FIELDS).first()
    )


def site_saved(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    """A Wagtail ``Site`` was saved: a new host takes the old host's overrides.

    Only its hostname or port changed: its overrides move with it (unless another
    site still has the old host) and the two hosts' documents are invalidated.
    Nothing that documents depend on changed (its name): nothing. Anything else:
    the whole section.
    """
    before = instance.__dict__.pop("_sitemapx_before", None)
    if raw or before is None:
        section_changed()
        return
    after = tuple(getattr(instance, name) for name in _SITE_FIELDS)
    if after == before:
        return
    if after[2:] != before[2:]:
        section_changed()
        return
    old, new = site_host(*before[:2]), site_host(*after[:2])
    if old == new:  # 80 and 443: the scheme is the request's, not the site's
        return
    shared = any(
        site_host(hostname, port) == old
        for hostname, port in sender._default_manager.exclude(pk=instance.pk).values_list(
            "hostname", "port"
        )
    )
    if not shared:
        move_overrides(old, new)
    hosts_changed([old, new])
    if is_enabled():
        transaction.on_commit(
            lambda: _announce_moved_site_soon(old, new),
            using=router.db_for_write(sender),
            robust=True,
        )


def _announce_moved_site_soon(old: str, new: str) -> None:
    """:func:`announce_moved_site` as a task on ``SITEMAPX_INDEXNOW_TASK_BACKEND``.

    It reads every document of the site, which a worker does better than the
    request that saved the site. With no backend (``None``), or one that cannot
    take the task (logged), it runs here.
    """
    alias = app_settings.INDEXNOW_TASK_BACKEND
    if alias is not None:
        try:
            from .tasks import announce_moved_site_task

            announce_moved_site_task.using(backend=alias).enqueue(old, new)
            return
        except Exception:
            logger.exception(
                "IndexNow: the announcement of %s could not be enqueued on the %r task "
                "backend; it runs in this process.",
                new,
                alias,
            )
    announce_moved_site(old, new)


def site_deleted(sender: Any, **kwargs: Any) -> None:
    """A Wagtail ``Site`` was deleted: its pages may be served elsewhere (the default site)."""
    section_changed()


def restriction_changed(sender: Any, **kwargs: Any) -> None:
    """A view restriction was saved or deleted: pages under it appear or go."""
    section_changed()


def connect() -> None:
    """Connect the receivers to Wagtail's signals and models (``apps.py`` calls it)."""
    from django.db.models.signals import post_delete, post_save, pre_save
    from wagtail import signals
    from wagtail.models import PageViewRestriction, Site

    signals.page_published.connect(page_published, dispatch_uid="sitemapx.wagtail.published")
    signals.page_unpublished.connect(page_unpublished, dispatch_uid="sitemapx.wagtail.unpublished")
    signals.post_page_move.connect(page_moved, dispatch_uid="sitemapx.wagtail.moved")
    signals.page_slug_changed.connect(page_slug_changed, dispatch_uid="sitemapx.wagtail.slug")
    post_delete.connect(page_deleted, dispatch_uid="sitemapx.wagtail.deleted")
    pre_save.connect(site_saving, sender=Site, dispatch_uid="sitemapx.wagtail.site_saving")
    post_save.connect(site_saved, sender=Site, dispatch_uid="sitemapx.wagtail.site_saved")
    post_delete.connect(site_deleted, sender=Site, dispatch_uid="sitemapx.wagtail.site_deleted")
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
