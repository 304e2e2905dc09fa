"""Reading a chunk's images, videos and news: one query per related declaration."""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from itertools import repeat
from typing import Any, TypeVar, cast

from django.db import models
from django.utils import timezone

from ..entries import Extras, NewsElement, VideoElement
from ..exceptions import InvalidValue, SkipReason
from ..extensions.declarations import Related, declared_kinds, relation_of
from ..extensions.values import Publication, Video, media_uri, news_element, video_element
from ..locations import LocationBuilder
from .base import Source

# One extension value per item, or the reason to leave the item out.
ItemExtras = Extras | SkipReason | None
T = TypeVar("T")


class ExtrasReader:
    """Reads a chunk's images, videos and news: one query per related declaration.

    ``key`` reads an item's key (a ``ModelSource`` row's first value); ``count``
    reports what was left out.
    """

    def __init__(
        self,
        source: Source,
        builder: LocationBuilder,
        count: Callable[[SkipReason], None],
        key: Callable[[Any], Any] | None = None,
    ) -> None:
        self.source = source
        self.builder = builder
        self.count = count
        self.key = key
        self.now: datetime.datetime = timezone.now()
        self.kinds = declared_kinds(source)
        self.publication: Publication | None = getattr(source, "news_publication", None)
        # Static values are the same for every item: made once.
        self._static_images: tuple[str, ...] | None = None
        self._static_videos: tuple[VideoElement, ...] | None = None
        images = getattr(source, "images", None)
        if "images" in self.kinds and not callable(images) and not isinstance(images, Related):
            self._static_images = self._images(images or ())
        videos = getattr(source, "videos", None)
        if "videos" in self.kinds and not callable(videos) and not isinstance(videos, Related):
            self._static_videos = self._videos(videos or ())

    def __call__(self, items: list[Any]) -> list[ItemExtras]:
        """The extras of each item, in order: ``Extras``, None, or the reason to skip it."""
        images = self._column("images", items)
        videos = self._column("videos", items)
        news = self._news_column(items)
        result: list[ItemExtras] = []
        for position in range(len(items)):
            item_news = news[position]
            if isinstance(item_news, SkipReason):
                result.append(item_news)
                continue
            item_images = images[position]
            item_videos = videos[position]
            if not item_images and not item_videos and item_news is None:
                result.append(None)
            else:
                result.append(Extras((), item_images, item_videos, item_news))
        return result

    def _column(self, kind: str, items: list[Any]) -> list[Any]:
        if kind not in self.kinds:
            return [()] * len(items)
        static = self._static_images if kind == "images" else self._static_videos
        if static is not None:
            return [static] * len(items)
        declaration = getattr(self.source, kind)
        make = self._images if kind == "images" else self._videos
        if isinstance(declaration, Related):
            grouped = self._related(declaration, items)
            return [make(grouped.get(self._key(item), ())) for item in items]
        return [make(self._per_item(declaration, kind, item)) for item in items]

    def _per_item(self, method: Any, kind: str, item: Any) -> Iterable[Any]:
        # An ItemSource's mapping item may carry its own, as it may its lastmod.
        if isinstance(item, Mapping) and kind in item:
            values = item[kind]
        elif callable(method):
            values = method(item)
        else:
            return ()
        if values is None:
            return ()
        if isinstance(values, str | Mapping | Video):
            return (values,)
        return values  # type: ignore[no-any-return]

    def _key(self, item: Any) -> Any:
        assert self.key is not None
        return self.key(item)

    def _images(self, values: Iterable[Any]) -> tuple[str, ...]:
        uris: list[str] = []
        limit = self.source.max_images
        for value in values:
            if len(uris) >= limit:
                self.count(SkipReason.OVER_IMAGE_LIMIT)
                continue
            try:
                uris.append(media_uri(self.builder, value, "image"))
            except InvalidValue:
                self.count(SkipReason.INVALID_IMAGE)
        return tuple(uris)

    def _videos(self, values: Iterable[Any]) -> tuple[VideoElement, ...]:
        elements: list[VideoElement] = []
        limit = self.source.max_videos
        for value in values:
            if len(elements) >= limit:
                self.count(SkipReason.OVER_VIDEO_LIMIT)
                continue
            try:
                element, extra_tags = video_element(value, self.builder)
            except InvalidValue:
                self.count(SkipReason.INVALID_VIDEO)
                continue
            for _ in range(extra_tags):
                self.count(SkipReason.OVER_VIDEO_TAG_LIMIT)
            elements.append(element)
        return tuple(elements)

    def _news_column(self, items: list[Any]) -> list[NewsElement | SkipReason | None]:
        if "news" not in self.kinds:
            return [None] * len(items)
        method = self.source.news
        column: list[NewsElement | SkipReason | None] = []
        for item in items:
            value = item["news"] if isinstance(item, Mapping) and "news" in item else method(item)
            if value is None:
                column.append(SkipReason.MISSING_NEWS)
                continue
            try:
                element = news_element(value, self.publication, self.now)
            except InvalidValue:
                column.append(SkipReason.INVALID_NEWS)
                continue
            column.append(element if element is not None else SkipReason.OLD_NEWS)
        return column

    def _related(self, declaration: Related, items: list[Any]) -> dict[Any, list[Any]]:
        """The declaration's values for the chunk's key range, by key: one query."""
        if not items:
            return {}
        source: Any = self.source  # a ModelSource: validate() refuses others
        assert source.model is not None
        relation = relation_of(source.model, declaration.relation)
        foreign_key = relation.field
        related = relation.related_model
        assert isinstance(related, type)
        key_name = source.key_name
        if foreign_key.target_field.name == key_name:
            key_column = foreign_key.attname
        else:
            key_column = f"{foreign_key.name}__{key_name}"
        # Items come in key order: the first and last keys bound the chunk.
        low, high = self._key(items[0]), self._key(items[-1])
        rows = (
            related._default_manager.filter(
                **{f"{key_column}__gte": low, f"{key_column}__lte": high},
                **declaration.filter,
            )
            .order_by(key_column, *declaration.order_by)
            .values_list(key_column, *declaration.columns())
        )
        grouped: dict[Any, list[Any]] = defaultdict(list)
        for key, *values in rows.iterator(chunk_size=10_000):
            grouped[key].append(declaration.value(values))
        return grouped


def with_extras(
    reader: ExtrasReader | None, items: list[Any], parallel: list[T]
) -> tuple[list[Any], list[T], Iterable[Extras | None]]:
    """``items`` and ``parallel`` (a value per item) less the items an extension
    leaves out, and the extras of those kept.

    An item whose extras is a ``SkipReason`` (news too old, say) is left out,
    and counted; without a ``reader`` every item is kept, with no extras.
    """
    if reader is None or not items:
        return items, parallel, repeat(None, len(items))
    found = reader(items)
    if not any(isinstance(value, SkipReason) for value in found):
        return items, parallel, cast("list[Extras | None]", found)
    kept: list[int] = []
    extras: list[Extras | None] = []
    for position, value in enumerate(found):
        if isinstance(value, SkipReason):
            reader.count(value)
        else:
            kept.append(position)
            extras.append(value)
    return [items[i] for i in kept], [parallel[i] for i in kept], extras


def extras_reader(
    source: Source, builder: LocationBuilder, count: Callable[[SkipReason], None]
) -> ExtrasReader | None:
    """The reader of a source's extensions, or None when it declares none (the common case)."""
    if not declared_kinds(source):
        return None
    key_name: str | None = getattr(source, "key_name", None)
    if key_name is None:
        return ExtrasReader(source, builder, count)
    name = key_name

    def key(item: Any) -> Any:
        # A ModelSource row's key comes first; a model instance has it as an attribute.
        return getattr(item, name) if isinstance(item, models.Model) else item[0]

    return ExtrasReader(source, builder, count, key)
