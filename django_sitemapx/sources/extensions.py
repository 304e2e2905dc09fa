"""Images, videos and news for any source: declarations, one query per chunk, page sizing.

A source declares them as it declares ``lastmod``: an attribute, the same for
every item, or a method taking one item (a row of a ``ModelSource``, an item of
an ``ItemSource``):

- ``images``: image URLs (paths or absolute URLs), or a method returning them;
- ``videos``: :class:`~django_sitemapx.extensions.Video` values (or mappings of
  their fields), or a method returning them;
- ``news``: a method returning a :class:`~django_sitemapx.extensions.News` (or
  None), with ``news_publication`` naming the publication.

A ``ModelSource`` may instead read them from a related model, with one query
per chunk of rows, never one per row: ``images = RelatedImages("images",
loc="url")`` selects the ``images`` relation's rows whose foreign key lies in
the chunk's key range, and ``videos = RelatedVideos(...)`` does the same for
videos. :class:`NewsSource` is a ``ModelSource`` of the last two days'
articles.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils import timezone

from ..entries import (
    IMAGE_NAMESPACE,
    NEWS_NAMESPACE,
    VIDEO_NAMESPACE,
    Extras,
    NewsElement,
    VideoElement,
)
from ..exceptions import InvalidValue, SkipReason, SourceConfigurationError
from ..extensions import (
    IMAGE_ELEMENT_BYTES,
    MAX_IMAGES_PER_URL,
    NEWS_ELEMENT_BYTES,
    NEWS_MAX_URLS,
    VIDEO_ELEMENT_BYTES,
    Publication,
    Video,
    media_uri,
    news_element,
    video_element,
)
from ..locations import LocationBuilder, Origin
from .base import Source

if TYPE_CHECKING:
    from django.db.models.fields.reverse_related import ForeignObjectRel

# One extension value per item, or the reason to leave the item out.
ItemExtras = Extras | SkipReason | None
ExtrasReader = Callable[[list[Any]], list[ItemExtras]]

_NOT_CHECKED_ORIGIN = Origin("https", "example.com")


class RelatedImages:
    """A ``ModelSource``'s images, from rows of a related model.

    ``relation`` is the name the section's model reaches the image model by: the
    ``related_name`` of a ``ForeignKey`` on the image model (``"images"``).
    ``loc`` is the image model's field holding the image's path or URL. Images
    come in ``order_by`` order (default: the image model's primary key).
    ``filter`` restricts the image rows (``{"is_public": True}``).

    The images of a chunk of rows are read in one query, for the chunk's key
    range (the foreign key from its first to its last row's key).
    """

    kind = "images"

    def __init__(
        self,
        relation: str,
        *,
        loc: str,
        order_by: Sequence[str] = ("pk",),
        filter: Mapping[str, Any] | None = None,
    ) -> None:
        self.relation = relation
        self.loc = loc
        self.order_by = tuple(order_by)
        self.filter = dict(filter or {})

    def columns(self) -> list[str]:
        """The related model's fields each value is read from, in order."""
        return [self.loc]

    def value(self, values: Sequence[Any]) -> Any:
        """One related row's value (its ``columns()``) as a source gives it."""
        return values[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.relation!r}, loc={self.loc!r})"


class RelatedVideos(RelatedImages):
    """A ``ModelSource``'s videos, from rows of a related model.

    Give the related model's field for each :class:`Video` field by keyword:
    ``RelatedVideos("videos", thumbnail_loc="thumbnail", title="title",
    description="summary", content_loc="file_url", duration="seconds")``.
    ``thumbnail_loc``, ``title`` and ``description`` are required, and one of
    ``content_loc`` and ``player_loc``.
    """

    kind = "videos"

    def __init__(
        self,
        relation: str,
        *,
        order_by: Sequence[str] = ("pk",),
        filter: Mapping[str, Any] | None = None,
        **fields: str,
    ) -> None:
        known = set(Video.__dataclass_fields__)
        unknown = set(fields) - known
        if unknown:
            raise SourceConfigurationError(f"RelatedVideos: no video field {sorted(unknown)!r}")
        for required in ("thumbnail_loc", "title", "description"):
            if required not in fields:
                raise SourceConfigurationError(f"RelatedVideos needs {required}=<field name>")
        if "content_loc" not in fields and "player_loc" not in fields:
            raise SourceConfigurationError("RelatedVideos needs content_loc= or player_loc=")
        if "tags" in fields or "restriction" in fields or "platform" in fields:
            raise SourceConfigurationError(
                "RelatedVideos reads single columns: give tags, restriction and platform "
                "through a videos() method"
            )
        super().__init__(relation, loc=fields["thumbnail_loc"], order_by=order_by, filter=filter)
        self.fields = dict(fields)

    def columns(self) -> list[str]:
        return list(self.fields.values())

    def value(self, values: Sequence[Any]) -> Any:
        return dict(zip(self.fields, values, strict=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.relation!r})"


Related = RelatedImages  # the base of both declarations


# -- declarations --------------------------------------------------------------------


def declared_kinds(source: Source) -> list[str]:
    """Which of ``images``, ``videos`` and ``news`` the source declares."""
    return [kind for kind in ("images", "videos", "news") if _declared(source, kind)]


def _declared(source: Source, kind: str) -> bool:
    value = getattr(source, kind, None)
    if value is None:
        return False
    return callable(value) or isinstance(value, Related) or bool(value)


def extension_namespaces(source: Source) -> dict[str, str]:
    """The extension namespaces a source's documents declare: only those it uses."""
    found = {
        "images": ("image", IMAGE_NAMESPACE),
        "videos": ("video", VIDEO_NAMESPACE),
        "news": ("news", NEWS_NAMESPACE),
    }
    return dict(found[kind] for kind in declared_kinds(source))


def validate_extensions(source: Source) -> None:
    """Raise ``SourceConfigurationError`` for a static extension value Google would refuse."""
    name = type(source).__name__
    builder = LocationBuilder(_NOT_CHECKED_ORIGIN)
    for limit in ("max_images", "max_videos"):
        value = getattr(source, limit)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SourceConfigurationError(f"{name}.{limit} must be a positive integer")
    timeout = source.cache_timeout
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise SourceConfigurationError(
            f"{name}.cache_timeout must be None or a positive number of seconds, not {timeout!r}"
        )
    if source.max_images > MAX_IMAGES_PER_URL:
        raise SourceConfigurationError(
            f"{name}.max_images is {source.max_images}: Google reads at most "
            f"{MAX_IMAGES_PER_URL} images per URL"
        )
    images = getattr(source, "images", None)
    if isinstance(images, Related):
        _validate_related(source, images)
    elif images is not None and not callable(images):
        if isinstance(images, str):
            raise SourceConfigurationError(f"{name}.images must be a list of URLs, not one string")
        for image in images:
            try:
                media_uri(builder, image, "image")
            except InvalidValue as error:
                raise SourceConfigurationError(f"{name}.images: {error}") from None
    videos = getattr(source, "videos", None)
    if isinstance(videos, Related):
        _validate_related(source, videos)
    elif videos is not None and not callable(videos):
        for video in videos:
            try:
                video_element(video, builder)
            except InvalidValue as error:
                raise SourceConfigurationError(f"{name}.videos: {error}") from None
    news = getattr(source, "news", None)
    if news is not None and not callable(news):
        raise SourceConfigurationError(
            f"{name}.news must be a method returning the item's News (a publication date "
            "and title are the item's own)"
        )
    publication = getattr(source, "news_publication", None)
    if publication is not None and not isinstance(publication, Publication):
        raise SourceConfigurationError(
            f"{name}.news_publication must be a Publication(name, language)"
        )


def _validate_related(source: Source, declaration: Related) -> None:
    from .querysets import ModelSource

    if not isinstance(source, ModelSource):
        raise SourceConfigurationError(
            f"{type(source).__name__}: {declaration!r} reads a related model, which only a "
            "ModelSource has"
        )
    if source.model is None:
        return
    try:
        relation = _relation(source.model, declaration.relation)
    except SourceConfigurationError as error:
        raise SourceConfigurationError(
            f"{type(source).__name__}.{declaration.kind}: {error}"
        ) from None
    related = relation.related_model
    assert isinstance(related, type)
    for column in [*declaration.columns(), *declaration.filter]:
        try:
            related._meta.get_field(column.split("__")[0])
        except FieldDoesNotExist:
            raise SourceConfigurationError(
                f"{type(source).__name__}.{declaration.kind}: {related.__name__} has no field "
                f"{column!r}"
            ) from None


def _relation(model: type[models.Model], name: str) -> ForeignObjectRel:
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        raise SourceConfigurationError(f"{model.__name__} has no relation {name!r}") from None
    if not (field.one_to_many or field.one_to_one) or field.concrete:
        raise SourceConfigurationError(
            f"{model.__name__}.{name} is not a reverse foreign key (the related_name of a "
            "ForeignKey to it)"
        )
    return field  # type: ignore[return-value]


def fields_for_extensions(source: Source) -> list[str]:
    """Fields a ``ModelSource`` row must carry for its declarations (none today)."""
    return []


# -- page sizing ---------------------------------------------------------------------


def extension_url_bytes(source: Source) -> int:
    """The most bytes a URL's image, video and news elements take, given the source's limits."""
    kinds = declared_kinds(source)
    size = 0
    if "images" in kinds:
        size += source.max_images * IMAGE_ELEMENT_BYTES
    if "videos" in kinds:
        size += source.max_videos * VIDEO_ELEMENT_BYTES
    if "news" in kinds:
        size += NEWS_ELEMENT_BYTES
    return size


def max_urls_per_page(source: Source, urls: int) -> int:
    """``urls`` (the source's limit), or 1,000 for a source with news, whichever is fewer.

    The byte bound of a page with extensions is :meth:`Source.max_url_bytes`,
    which adds :func:`extension_url_bytes`: one rule sizes every page.
    """
    if "news" in declared_kinds(source):
        return min(urls, NEWS_MAX_URLS)
    return urls


# -- reading extensions for a chunk of items ------------------------------------------


class ExtensionReader:
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
        *,
        now: datetime.datetime | None = None,
    ) -> None:
        self.source = source
        self.builder = builder
        self.count = count
        self.key = key
        self.now = now if now is not None else timezone.now()
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
        relation = _relation(source.model, declaration.relation)
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


def chunk_extras(
    reader: ExtrasReader | None, batch: list[Any]
) -> tuple[list[Any], list[ItemExtras] | None, dict[SkipReason, int]]:
    """The batch less the items its extensions leave out, their extras, and the skips."""
    if reader is None:
        return batch, None, {}
    extras = reader(batch)
    skipped: dict[SkipReason, int] = {}
    if not any(isinstance(value, SkipReason) for value in extras):
        return batch, extras, skipped
    kept_rows: list[Any] = []
    kept_extras: list[ItemExtras] = []
    for row, value in zip(batch, extras, strict=True):
        if isinstance(value, SkipReason):
            skipped[value] = skipped.get(value, 0) + 1
        else:
            kept_rows.append(row)
            kept_extras.append(value)
    return kept_rows, kept_extras, skipped


def extras_reader(
    source: Source, builder: LocationBuilder, count: Callable[[SkipReason], None]
) -> ExtensionReader | None:
    """The reader of a source's extensions, or None when it declares none (the common case)."""
    if not declared_kinds(source):
        return None
    key_name: str | None = getattr(source, "key_name", None)
    if key_name is None:
        return ExtensionReader(source, builder, count)
    name = key_name

    def key(item: Any) -> Any:
        # A ModelSource row's key comes first; a model instance has it as an attribute.
        return getattr(item, name) if isinstance(item, models.Model) else item[0]

    return ExtensionReader(source, builder, count, key)
