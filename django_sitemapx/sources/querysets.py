"""The model-backed source: pages of a queryset on stable key ranges, streamed as plain tuples."""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from django.core.exceptions import FieldDoesNotExist
from django.db import connections, models
from django.db.models import F
from django.urls import (
    NoReverseMatch,
    Resolver404,
    get_resolver,
    get_script_prefix,
    get_urlconf,
    resolve,
)
from django.utils import translation

from ..conf import language_codes
from ..exceptions import Skip, SourceConfigurationError
from ..extensions.declarations import Related, validate_relation
from ..locations.hosts import canonical_host
from ..locations.reverse import CompiledUrl, compile_url
from . import pages
from .base import (
    MAX_ESCAPED_LOCATION_BYTES,
    MAX_ORIGIN_LENGTH,
    Page,
    PageSummary,
    PlainChunkEntries,
    Source,
    escaped_length,
    is_overridden,
)
from .codecs import key_model_field
from .lastmods import LASTMOD_ALIAS, LastmodInRange, W3CDatetime, is_postgresql, lastmod_in_sql
from .pages import PageTable
from .rows import model_entries, row_location
from .summaries import in_range

if TYPE_CHECKING:
    from ..locations import LocationBuilder


# A page is sized for the URL limit less 1/PAGE_SLACK of it (see ModelSource.rows_per_page).
PAGE_SLACK = 50


class ModelSource(Source):
    """A section listing the rows of a queryset.

    Rows are read with ``values_list(...).iterator()``: no model instance is built
    unless the source relies on ``get_absolute_url()``. Give the location as
    ``url_name`` plus ``url_kwargs`` (URL keyword argument to field name), or
    override ``location(row)`` (or pass ``location=`` to ``register()``), where
    ``row`` is a named tuple of ``key_field``, the ``url_kwargs`` fields and
    ``fields``. Per-item ``lastmod``, ``changefreq`` and ``priority`` methods
    receive the same row.

    The key (``key_field``, the primary key by default) is any unique integer,
    UUID or string (up to 255 characters) field. Pages are stored key ranges
    (see ``sources.pages``): every page but the last holds at least half of
    :meth:`rows_per_page` rows and none more; a change moves only its page and at
    most one neighbour.
    """

    model: type[models.Model] | None = None
    queryset: models.QuerySet[Any] | None = None
    key_field: str = "pk"
    url_name: str | None = None
    url_kwargs: Mapping[str, str] | None = None
    fields: Sequence[str] = ()
    lastmod_field: str | None = None
    # Whether a saved or deleted row (Django's post_save and post_delete) invalidates
    # the section and feeds IndexNow. A source whose rows change through events of
    # their own app (Wagtail's publishing) sets it False and handles those events.
    model_signals: bool = True

    def __init__(
        self, section: str = "", model: type[models.Model] | None = None, **options: Any
    ) -> None:
        super().__init__(section, **options)
        if model is not None:
            self.model = model
        elif self.model is None and self.queryset is not None:
            self.model = self.queryset.model
        # Made here, on the registered instance, so that the copies each request
        # serves (for_origin) share them: see compiled_url_for, max_location_bytes.
        self._compiled_urls: dict[Any, CompiledUrl] = {}
        self._location_bounds: dict[Any, int] = {}

    def get_queryset(self) -> models.QuerySet[Any]:
        """The rows of this section; evaluated anew for every document."""
        if self.queryset is not None:
            return self.queryset.all()
        assert self.model is not None
        return self.model._default_manager.all()

    def location(self, row: Any) -> str:
        """Path or same-host URL of ``row``; override it, or set ``url_name``."""
        return str(row.get_absolute_url())

    # -- how rows become locations ------------------------------------------------

    @property
    def has_custom_location(self) -> bool:
        """True when ``location`` is overridden, in a subclass or as a ``register()`` option."""
        return is_overridden(self, ModelSource, "location")

    @property
    def uses_url_name(self) -> bool:
        """True when locations are ``url_name`` filled with row values, in bulk."""
        return self.url_name is not None and not self.has_custom_location

    @property
    def uses_instances(self) -> bool:
        """True when locations come from ``get_absolute_url()`` on model instances."""
        return self.url_name is None and not self.has_custom_location

    @property
    def key_name(self) -> str:
        """The field pages are cut on (``key_field``, the primary key's name for ``"pk"``)."""
        assert self.model is not None
        return self.model._meta.pk.name if self.key_field == "pk" else self.key_field

    @property
    def lastmod_column(self) -> str | None:
        """``lastmod_field``, unless a ``lastmod`` method decides the lastmods."""
        return self.lastmod_field if self.lastmod_field and not callable(self.lastmod) else None

    def url_fields(self) -> dict[str, str]:
        """``url_kwargs``: URL keyword argument to field name."""
        return dict(self.url_kwargs or {})

    def row_filter_at(self, location_key: str) -> dict[str, Any] | None:
        """The row filter (field to value) of the URL at ``location_key``, resolved.

        ``location_key`` is a location's key (``locations.keys``): a path, with or
        without its trailing slash. None when the path is not this section's
        ``url_name`` or does not give every ``url_kwargs`` value.
        """
        path = location_key.partition("?")[0]
        for candidate in (path, path + "/") if path != "/" else (path,):
            try:
                match = resolve(unquote(candidate))
            except Resolver404:
                continue
            if match.view_name != self.url_name:
                continue
            fields = self.url_fields()
            if set(fields) - set(match.kwargs):
                return None
            return {field: match.kwargs[name] for name, field in fields.items()}
        return None

    def row_fields(self) -> list[str]:
        """The fields of a row, in order: the key, the ``url_kwargs`` fields, ``fields``."""
        names = [self.key_name, *self.url_fields().values(), *self.fields]
        return list(dict.fromkeys(names))

    def compiled_url(self) -> CompiledUrl:
        """``url_name`` reversed once; raises ``NoReverseMatch`` if it cannot be."""
        assert self.url_name is not None
        return compile_url(self.url_name, self.url_fields())

    def compiled_url_for(self, language: str | None) -> CompiledUrl:
        """:meth:`compiled_url` with ``language`` active (None: as it is), kept while the
        URLconf, the script prefix and the source's URL stay the same.

        Page sizing and every document of every language use it, so a section
        reverses its URL once per language, not once per document.
        """
        memo: dict[Any, CompiledUrl] = self.__dict__.setdefault("_compiled_urls", {})
        # None reverses in the active language, which the URL may depend on
        # (i18n_patterns, translated routes): it is the key, or one request's
        # language would be every later request's.
        key = self._url_key(translation.get_language() if language is None else language)
        found = memo.get(key)
        if found is None:
            if language is None:
                found = self.compiled_url()
            else:
                with translation.override(language):
                    found = self.compiled_url()
            _remember(memo, key, found)
        return found

    def _url_key(self, *what: Any) -> tuple[Any, ...]:
        """``what`` with what a reversed URL depends on: the URLconf, the script
        prefix and the source's ``url_name`` and ``url_kwargs``."""
        return (
            *what,
            get_resolver(get_urlconf()),
            get_script_prefix(),
            self.url_name,
            tuple(self.url_fields().items()),
        )

    def max_location_bytes(self) -> int:
        """A bound computed from ``url_name``'s pattern, in each language, and the fields.

        The pattern's literal text, plus for each URL field its longest value
        as the converter writes it: 20 characters for an integer, the field's
        ``max_length`` for a slug (a slug is never encoded or escaped), twelve
        times ``max_length`` for ``str``/``path`` (a four-byte UTF-8 character
        percent-encodes to twelve). The protocol's worst case when a field has
        no ``max_length`` or a converter is not one of Django's.
        """
        if not self.uses_url_name:
            return super().max_location_bytes()
        # A one-language section's URLs are the active language's: sized for the
        # longest of any language a request may activate, one bound whatever the
        # request (a page table cut per language would be cut again at each change).
        codes: list[str | None] = list(self.get_languages() if self.i18n else language_codes())
        codes = codes or [None]
        # Every page and the index size pages on it: computed once while the
        # URLconf, the script prefix and the source's URL stay the same.
        memo: dict[Any, int] = self.__dict__.setdefault("_location_bounds", {})
        key = self._url_key(tuple(codes))
        found = memo.get(key)
        if found is None:
            found = self._location_bound(codes)
            _remember(memo, key, found)
        return found

    def _location_bound(self, codes: list[str | None]) -> int:
        longest = 0
        for code in codes:
            try:
                url = self.compiled_url_for(code)
            except NoReverseMatch:  # reported by the checks
                return super().max_location_bytes()
            bound = self._template_bound(url)
            if bound is None:
                return super().max_location_bytes()
            longest = max(longest, bound)
        return min(MAX_ORIGIN_LENGTH + longest, MAX_ESCAPED_LOCATION_BYTES)

    def _template_bound(self, url: CompiledUrl) -> int | None:
        plain = url.plain
        if plain is None:
            return None
        assert self.model is not None
        total = sum(map(escaped_length, plain.literals))
        for field, kind in zip(plain.fields, plain.kinds, strict=True):
            if kind == "int":
                total += _INT_LENGTH
                continue
            length = _max_length(self.model, field)
            if length is None:
                return None
            total += length if kind == "slug" else length * _WORST_ENCODING
        return total

    def _validate_related(self, declaration: Related) -> None:
        if self.model is None:
            return
        try:
            validate_relation(self.model, declaration)
        except SourceConfigurationError as error:
            raise SourceConfigurationError(f"{type(self).__name__}.{error}") from None

    # -- pages ------------------------------------------------------------------

    def page_table(self) -> PageTable:
        """The section's stored pages (see ``sources.pages``)."""
        return PageTable(self)

    def page_summaries(self) -> list[PageSummary]:
        return [
            PageSummary(state.number, state.rows, state.lastmod, state.undated)
            for state in self.page_table().states()
            if state.rows
        ]

    def page_proofs(self) -> dict[int, str]:
        return self.page_table().proofs()

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        table = self.page_table()
        # The export hands the index's summary in: the page was counted already.
        found = table.bounds(table.states(set() if summary is not None else {number}), number)
        if found is None:
            return None
        state, bounds = found
        # For page_built(): the page as served, and whether it is the section's last.
        self._served_pages = {number: (state, bounds.high is None)}
        if summary is None:
            if not state.rows:
                return None
            summary = PageSummary(number, state.rows, state.lastmod, state.undated)
        rows = in_range(self, self.listed_rows(), bounds)
        return Page(summary, PlainChunkEntries(functools.partial(model_entries, self, rows)))

    def rows_per_page(self) -> int:
        """How many rows one page holds: as many as the URL limit allows, less 2%.

        A model section's pages are sized by :meth:`get_limit`, not by the
        worst-case :meth:`max_url_bytes`: the protocol's 50 MB is kept as each
        page is rendered (bytes are sent only once the rest cannot go over
        it), and a page that would go over it is split there and rendered
        again (:meth:`page_overflowed`, see ``sources.pages``). The 2% left
        (1,000 of 50,000) hold rows that enter a full page before it is
        counted again (a bulk change not yet invalidated): they are listed,
        not cut at the URL limit.
        """
        limit = self.get_limit()
        return max(1, (limit - limit // PAGE_SLACK) // self.urls_per_row())

    def max_page_urls(self) -> int:
        """The writer's limit: a page may hold more rows than it was counted with."""
        return self.get_limit()

    def page_overflowed(
        self,
        number: int,
        urls: int,
        size: int,
        *,
        fitting: Callable[[int], int | None] | None = None,
    ) -> bool:
        """Cut page ``number`` where it fits, as measured (see ``PageTable.split_over``)."""
        per_row = self.urls_per_row()
        measured = fitting(math.floor(pages.SPLIT_SHARE * pages.PAGE_BYTES)) if fitting else None
        keep = measured // per_row if measured is not None else None
        return self.page_table().split_over(number, urls // per_row, size, keep)

    def page_built(self, number: int, urls: int, size: int) -> None:
        """Record the page's size as measured; give a page built nearly empty more rows.

        A page that is not the last, cut by its size (its estimated size full
        by size) but built under ``MIN_FILL`` of both limits (its rows were
        shorter than those measured), takes rows from the unmeasured pages after it.
        """
        served = getattr(self, "_served_pages", {}).get(number)
        if served is None:
            return
        state, last = served
        self.page_measured(state, urls, size, last=last)

    def page_measured(
        self,
        state: pages.State,
        urls: int,
        size: int,
        *,
        last: bool,
        table: pages.PageTable | None = None,
    ) -> None:
        """Record that the page of ``state`` was built with ``urls`` URLs in ``size`` bytes.

        :meth:`page_built` for a page built from its state in the page table
        rather than by :meth:`page` (the export's pages made in blocks,
        ``export.splice``); ``last`` says whether it is the section's last page;
        ``table`` is the section's :meth:`page_table` when made already.
        """
        number = state.number
        table = table or self.page_table()
        table.record_size(state, size)
        if (
            not last
            and not state.measured
            and state.bytes is not None
            and state.bytes >= pages.FULL_SHARE * pages.PAGE_BYTES
            and size < pages.MIN_FILL * pages.PAGE_BYTES
            and urls < pages.MIN_FILL * self.get_limit()
        ):
            table.refill(number, urls // self.urls_per_row(), size)

    def _counts_pages_together(self) -> bool:
        """Whether neighbouring pages are counted in one pass (``summaries.summarize_pages``).

        As measured (``benchmarks/scale.py``, both ways): on PostgreSQL, whose
        tables are not kept in key order, one pass is faster than an aggregate per
        page on every key tried (dense and sparse integers, UUIDs). On SQLite too,
        except on an integer primary key: the table is stored in its order, a
        page's range is read in place, and one aggregate per page is faster. On
        MariaDB and MySQL (not measured) the table is kept in primary-key order:
        one aggregate per page. A source may override this; both ways give the
        same summaries.
        """
        assert self.model is not None
        connection = connections[self.get_queryset().db]
        if connection.vendor == "postgresql":
            return True
        if connection.vendor == "sqlite":
            field = key_model_field(self.model, self.key_name)
            return not (
                field is not None
                and field.primary_key
                and field.db_type(connection) == "integer"  # the rowid
            )
        return False

    def listed_rows(self) -> models.QuerySet[Any]:
        """``get_queryset()`` less rows that can never be listed: NULL URL values.

        The index, a page's summary and its entries all start here, so they
        count the same rows.
        """
        queryset = self.get_queryset()
        if self.uses_url_name:
            assert self.model is not None
            not_null = {
                f"{field}__isnull": False
                for field in self.url_fields().values()
                if _nullable(self.model, field)
            }
            queryset = queryset.filter(**not_null)
        return queryset

    def rows_queryset(
        self,
        queryset: models.QuerySet[Any] | None = None,
        *,
        named: bool = True,
        fields: Sequence[str] | None = None,
    ) -> models.QuerySet[Any]:
        """``values_list()`` of :meth:`row_fields` (or ``fields``), then the lastmod column."""
        if queryset is None:
            queryset = self.listed_rows()
        names = list(self.row_fields() if fields is None else fields)
        column = self.lastmod_column
        if column is not None:
            if lastmod_in_sql(self, queryset.db):
                queryset = queryset.annotate(**{LASTMOD_ALIAS: W3CDatetime(F(column))})
                names.append(LASTMOD_ALIAS)
            elif is_postgresql(queryset.db):
                queryset = queryset.annotate(**{LASTMOD_ALIAS: LastmodInRange(F(column))})
                names.append(LASTMOD_ALIAS)
            else:
                names.append(column)
        return queryset.values_list(*names, named=named)

    # -- entries ----------------------------------------------------------------

    def uris_of(self, instance: models.Model, builders: Sequence[LocationBuilder]) -> list[str]:
        """The URIs this section lists for ``instance`` as the database has it now.

        One per builder's origin; none when the section does not list the row
        (filtered out, a NULL URL field, or another model). One query, read
        through the same queryset and location code as the pages.
        """
        return [uri for uri, _values in self.listings_of(instance, builders)]

    def listings_of(
        self, instance: models.Model, builders: Sequence[LocationBuilder]
    ) -> list[tuple[str, Any]]:
        """:meth:`uris_of`, each URI with the row values its entry is written from.

        The values (the row's fields and lastmod, or the instance's lastmod)
        compare equal before and after a save that changes nothing the entry
        shows, such as a title no field of the section reads.
        """
        assert self.model is not None
        if instance._meta.concrete_model is not self.model._meta.concrete_model:
            return []
        found = self.listed_rows().filter(pk=instance.pk)
        rows = list(found[:1] if self.uses_instances else self.rows_queryset(found)[:1])
        listings: list[tuple[str, Any]] = []
        hosts = self.get_language_hosts()
        for builder in builders:
            # With a host per language, a host lists its own languages' versions only
            # (sources.languages): those are its URIs, never another language's path.
            own = canonical_host(builder.origin.host, builder.origin.scheme)
            codes: list[str | None] = (
                [code for code in self.get_languages() if hosts.get(code, own) == own]
                if hosts
                else [None]
            )
            for code in codes:
                location, _bulk = row_location(self, builder, code)
                active = translation.override(code) if code else contextlib.nullcontext()
                for row in rows:
                    try:
                        with active:
                            listings.append((location(row), self._entry_values(row)))
                    except Skip:
                        continue
        return listings

    def _entry_values(self, row: Any) -> Any:
        if not self.uses_instances:
            return tuple(row)  # the key, URL fields, fields and the lastmod column
        column = self.lastmod_column
        if column is not None:
            return getattr(row, column, None)
        if callable(self.lastmod):
            try:
                return self.lastmod(row)
            except Exception:  # a project's method: the entry's lastmod is unknown
                return None
        return None


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) > 64:  # URLconfs swapped many times (tests): start again
        memo.clear()
    memo[key] = value


def _nullable(model: type[models.Model], path: str) -> bool:
    """False only if ``path`` follows non-null forward fields: its value is never NULL."""
    # Then "IS NOT NULL" filters nothing, and leaving it out spares the index its
    # join (the index query reads every row: a join there doubled its time).
    *relations, last = path.split("__")
    try:
        for name in relations:
            field = model._meta.get_field(name)
            if not (field.many_to_one or field.one_to_one) or not field.concrete or field.null:
                return True
            assert isinstance(field.related_model, type)
            model = field.related_model
        field = model._meta.get_field(last)
    except FieldDoesNotExist:
        return True
    return bool(field.null) or not field.concrete or field.is_relation


# The longest integer a URL's int converter writes (a 64-bit key has 19 digits).
_INT_LENGTH = 20
# The most characters one character of a str/path value becomes in a location:
# four UTF-8 bytes, each percent-encoded as three characters.
_WORST_ENCODING = 12


def _max_length(model: type[models.Model], path: str) -> int | None:
    """The most characters ``path``'s value can have, or None if nothing bounds it."""
    *relations, last = path.split("__")
    try:
        for name in relations:
            related = model._meta.get_field(name).related_model
            if not isinstance(related, type):
                return None
            model = related
        field = model._meta.get_field(last)
    except FieldDoesNotExist:
        return None
    if isinstance(field, models.IntegerField | models.AutoField):
        return _INT_LENGTH
    length = getattr(field, "max_length", None)
    return length if isinstance(length, int) else None
