"""Image, video and news declarations of a source: validation, namespaces, page sizing.

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
loc="url")``, ``videos = RelatedVideos(...)``. ``sources.extras`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models

from ..entries import IMAGE_NAMESPACE, NEWS_NAMESPACE, VIDEO_NAMESPACE
from ..exceptions import InvalidValue, SourceConfigurationError
from ..locations import LocationBuilder, Origin
from .values import (
    IMAGE_ELEMENT_BYTES,
    MAX_IMAGES_PER_URL,
    NEWS_ELEMENT_BYTES,
    NEWS_MAX_URLS,
    VIDEO_ELEMENT_BYTES,
    Publication,
    Video,
    media_uri,
    video_element,
)

if TYPE_CHECKING:
    from django.db.models.fields.reverse_related import ForeignObjectRel

    from ..sources.base import Source

_NOT_CHECKED_ORIGIN = Origin("https", "example.com")


class Related:
    """Values of a ``ModelSource``'s items read from rows of a related model.

    ``relation`` is the name the section's model reaches the related model by:
    the ``related_name`` of a ``ForeignKey`` on it. The values of a chunk of
    rows are read in one query, for the chunk's key range (the foreign key from
    its first to its last row's key), in ``order_by`` order (default: the
    related model's primary key); ``filter`` restricts the related rows.
    """

    kind = ""

    def __init__(
        self,
        relation: str,
        *,
        order_by: Sequence[str] = ("pk",),
        filter: Mapping[str, Any] | None = None,
    ) -> None:
        self.relation = relation
        self.order_by = tuple(order_by)
        self.filter = dict(filter or {})

    def columns(self) -> list[str]:
        """The related model's fields each value is read from, in order."""
        raise NotImplementedError

    def value(self, values: Sequence[Any]) -> Any:
        """One related row's value (its ``columns()``) as a source gives it."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.relation!r})"


class RelatedImages(Related):
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
        super().__init__(relation, order_by=order_by, filter=filter)
        self.loc = loc

    def columns(self) -> list[str]:
        return [self.loc]

    def value(self, values: Sequence[Any]) -> Any:
        return values[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.relation!r}, loc={self.loc!r})"


class RelatedVideos(Related):
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
        super().__init__(relation, order_by=order_by, filter=filter)
        self.fields = dict(fields)

    def columns(self) -> list[str]:
        return list(self.fields.values())

    def value(self, values: Sequence[Any]) -> Any:
        return dict(zip(self.fields, values, strict=True))


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


def validate_extensions(source: Source, validate_related: Callable[[Related], None]) -> None:
    """Raise ``SourceConfigurationError`` for a static extension value Google would refuse.

    ``validate_related`` checks a related-model declaration against the source's model.
    """
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
        validate_related(images)
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
        validate_related(videos)
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


def validate_relation(model: type[models.Model], declaration: Related) -> None:
    """Raise ``SourceConfigurationError`` unless ``model`` has the declared relation and fields."""
    try:
        relation = relation_of(model, declaration.relation)
    except SourceConfigurationError as error:
        raise SourceConfigurationError(f"{declaration.kind}: {error}") from None
    related = relation.related_model
    assert isinstance(related, type)
    for column in [*declaration.columns(), *declaration.filter]:
        try:
            related._meta.get_field(column.split("__")[0])
        except FieldDoesNotExist:
            raise SourceConfigurationError(
                f"{declaration.kind}: {related.__name__} has no field {column!r}"
            ) from None


def relation_of(model: type[models.Model], name: str) -> ForeignObjectRel:
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

    :meth:`Source.get_limit` applies it: the writer's limit and the pages'
    capacity both follow. Each URL with extensions is held to :meth:`Source.max_url_bytes`,
    which adds :func:`extension_url_bytes` (list-based sources size pages on it; a model
    section's page is split where it reaches 50 MB, see ``sources.pages``).
    """
    if "news" in declared_kinds(source):
        return min(urls, NEWS_MAX_URLS)
    return urls
