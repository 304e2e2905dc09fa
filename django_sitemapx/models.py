"""Editors' per-URL overrides of what the sitemap says."""

from __future__ import annotations

import contextlib
import hashlib
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import connections, models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .exceptions import InvalidLocation
from .locations.hosts import checked_host
from .locations.keys import location_key
from .rules import GLOB, PREFIX, pattern_text
from .values import CHANGEFREQS

if TYPE_CHECKING:
    from django.utils.functional import _StrOrPromise

# The protocol's seven values (``values.CHANGEFREQS``), worded for editors.
_CHANGEFREQ_LABELS = {
    "always": _("always"),
    "hourly": _("hourly"),
    "daily": _("daily"),
    "weekly": _("weekly"),
    "monthly": _("monthly"),
    "yearly": _("yearly"),
    "never": _("never"),
}
CHANGEFREQ_CHOICES = [(value, _CHANGEFREQ_LABELS[value]) for value in CHANGEFREQS]

_PRIORITY_RANGE = _("Priority must be between 0.0 and 1.0.")


def _priority_field(help_text: _StrOrPromise) -> models.DecimalField[Any, Any]:
    """The priority an override or a rule sets: 0.0 to 1.0, one decimal, or none."""
    return models.DecimalField(
        _("priority"),
        max_digits=2,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[
            MinValueValidator(Decimal("0.0"), message=_PRIORITY_RANGE),
            MaxValueValidator(Decimal("1.0"), message=_PRIORITY_RANGE),
        ],
        help_text=help_text,
    )


def _changefreq_field(help_text: _StrOrPromise) -> models.CharField[Any, Any]:
    """The change frequency an override or a rule sets: one of the seven, or none."""
    return models.CharField(
        _("change frequency"),
        max_length=7,
        choices=CHANGEFREQ_CHOICES,
        blank=True,
        default="",
        help_text=help_text,
    )


def _value_constraints(
    kind: str, changes_nothing: _StrOrPromise
) -> tuple[models.CheckConstraint, ...]:
    """The checks on the values an override or a rule sets (constraint names per ``kind``)."""
    return (
        models.CheckConstraint(
            condition=Q(priority__isnull=True) | Q(priority__gte=0, priority__lte=1),
            name=f"sitemapx_{kind}_priority_range",
            violation_error_message=_PRIORITY_RANGE,
        ),
        models.CheckConstraint(
            condition=Q(changefreq__in=["", *CHANGEFREQS]),
            name=f"sitemapx_{kind}_changefreq_valid",
            violation_error_message=_("Choose one of the seven change frequencies."),
        ),
        models.CheckConstraint(
            condition=Q(exclude=True)
            | Q(priority__isnull=False)
            | ~Q(changefreq="")
            | Q(lastmod__isnull=False),
            name=f"sitemapx_{kind}_changes_something",
            violation_error_message=changes_nothing,
        ),
    )


_DUPLICATE_LOCATION = _(
    "An override for this URL on this host already exists (locations are compared "
    "without host and trailing slash; the host field tells overrides of one location apart)."
)
_LOCATION_ERRORS = {
    "empty": _("Enter a path such as /about/ or a full URL."),
    "control_characters": _("The location contains control characters."),
    "not_http": _("Enter a path starting with / or a full http:// or https:// URL."),
    "malformed": _("This is not a well-formed path or http(s) URL."),
}


# The location column's length. The form's own max_length counts what the editor
# typed; percent-encoding can make the stored key up to twelve times longer.
LOCATION_MAX_LENGTH = 2048


def validate_location(value: str) -> None:
    """Refuse what cannot be a path or an http(s) URL, or is too long once encoded."""
    try:
        key = location_key(value)
    except InvalidLocation as error:
        raise ValidationError(_LOCATION_ERRORS[error.code], code=error.code) from None
    if len(key) > LOCATION_MAX_LENGTH:
        raise ValidationError(
            _(
                "This location is %(length)s characters long once percent-encoded as the "
                "sitemap writes it (%(key)s…); at most %(limit)s fit."
            ),
            code="too_long",
            params={
                "length": f"{len(key):,}",
                "limit": f"{LOCATION_MAX_LENGTH:,}",
                "key": key[:60],
            },
        )


class Override(models.Model):
    """What the sitemap says about one URL, whatever its source says.

    Every value is optional: an empty field keeps the source's value. The
    ``location`` is stored normalised (see ``locations.keys.location_key``), so
    ``/a/``, ``/a`` and ``https://host/a/`` are one row. ``host`` (canonical, as
    ``Rule.host``) limits the override to that host, where it wins over the
    host-less override of the same location; empty, it applies on every host.
    One row per host and location.
    """

    location = models.CharField(
        _("location"),
        max_length=LOCATION_MAX_LENGTH,
        validators=[validate_location],
        help_text=_(
            "A path such as /about/ or the full URL. Stored without host and trailing "
            "slash, so /about/ and https://example.com/about are the same location; "
            "the host field says which host the override applies on."
        ),
    )
    host = models.CharField(
        _("host"),
        max_length=255,
        blank=True,
        default="",
        help_text=_(
            "Only on this host, where it wins over an override of the same location "
            "without host. Empty: every host."
        ),
    )
    # Unique in the (host, location) pair's stead (see location_hash); set by save().
    location_hash = models.CharField(max_length=64, unique=True, editable=False)
    priority = _priority_field(_("0.0 to 1.0, one decimal. Empty: the section's value."))
    changefreq = _changefreq_field(_("Empty: the section's value."))
    exclude = models.BooleanField(
        _("exclude from the sitemap"),
        default=False,
        help_text=_("Leave this URL out of the sitemap."),
    )
    lastmod = models.DateTimeField(
        _("last modified"),
        null=True,
        blank=True,
        help_text=_(
            "Force the last modification date, e.g. after an editorial update the "
            "page's own timestamp does not show. Empty: the section's value."
        ),
    )
    note = models.TextField(
        _("note"), blank=True, help_text=_("Why this override exists (not published).")
    )
    # Where the URL was found when the override was last saved: lets the index
    # carry a forced lastmod, the cache invalidate one page, and the admin filter.
    section = models.CharField(_("section"), max_length=100, blank=True, editable=False)
    page = models.PositiveIntegerField(_("page"), null=True, blank=True, editable=False)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("changed by"),
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("changed"), auto_now=True)

    # What the row held when read, so a change can invalidate where it was too.
    _loaded_place: tuple[str, int | None] | None = None
    _loaded_location: str | None = None
    _loaded_host: str | None = None
    # What it showed (``overrides.Shown``), so IndexNow can tell whether it was listed.
    _loaded_shown: tuple[bool, Any, str, Any] | None = None

    class Meta:
        verbose_name = _("sitemap override")
        verbose_name_plural = _("sitemap overrides")
        ordering = ("location", "host")
        constraints = (
            models.CheckConstraint(
                condition=Q(location__startswith="/"),
                name="sitemapx_override_location_is_path",
                violation_error_message=_("The location must be stored as a path."),
            ),
            *_value_constraints(
                "override",
                _(
                    "Set at least one of priority, change frequency, exclude or last "
                    "modified; an override that changes nothing is not needed."
                ),
            ),
        )
        indexes = (
            models.Index(fields=["section", "page"], name="sitemapx_override_page"),
            # Whether any override names a document's hosts, asked once per document.
            models.Index(fields=["host"], name="sitemapx_override_host"),
        )

    def __str__(self) -> str:
        return f"{self.host}{self.location}" if self.host else self.location

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.location = location_key(self.location)
        if self.host:
            # Canonical as the hot path matches it, from a script that skips clean() too.
            self.host = checked_host(self.host.strip()) or self.host.strip()
        self.location_hash = location_hash(self.location, self.host)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and {"location", "host"} & set(update_fields):
            kwargs["update_fields"] = {*update_fields, "location_hash"}
        super().save(*args, **kwargs)

    def validate_unique(self, exclude: Any = None) -> None:
        super().validate_unique(exclude)
        if (exclude and "location" in exclude) or not self.location:
            return
        try:
            key = location_key(self.location)
        except InvalidLocation:
            return  # the field validator reports it
        host = checked_host(self.host.strip()) if self.host else ""
        if host is None:
            return  # clean() reports it
        others = Override.objects.filter(location_hash=location_hash(key, host))
        if self.pk is not None:
            others = others.exclude(pk=self.pk)
        if others.exists():
            raise ValidationError({"location": _DUPLICATE_LOCATION}, code="unique")

    def clean(self) -> None:
        super().clean()
        if self.location:
            # An invalid location is reported by the field validator.
            with contextlib.suppress(InvalidLocation):
                self.location = location_key(self.location)
        if self.host:
            host = checked_host(self.host.strip())
            if host is None:
                raise ValidationError({"host": _("This is not a host name.")}, code="invalid_host")
            self.host = host
        if self.lastmod is not None and self.lastmod > timezone.now():
            raise ValidationError(
                {"lastmod": _("The last modification cannot be in the future.")},
                code="future_lastmod",
            )


def location_hash(location: str, host: str = "") -> str:
    """The digest an override is unique under: hex SHA-256 of the normalised location,
    with its canonical ``host`` in front when it has one.

    A unique index on a 2,048-character column is refused by MySQL 8 and warned
    about by MariaDB (``mysql.W003``); a 64-character digest is unique everywhere.
    A host-less override's digest is the location's alone, as before overrides
    had a host. A newline, which no host and no location key holds, keeps a
    host's digest apart from every location's.
    """
    text = f"{host}\n{location}" if host else location
    return hashlib.sha256(text.encode()).hexdigest()


class Rule(models.Model):
    """What the sitemap says about every URL matching a pattern, whatever its source says.

    A rule matches by prefix or by glob (see ``rules``), on one host or every
    host, in one section or every section. Rules apply in ascending
    ``position`` (then creation): per value, the first matching rule that sets
    it decides; any matching rule that excludes excludes. An ``Override`` of
    the URL wins over every rule: its values first, and whether it is listed.
    """

    MATCHING_CHOICES = [
        (PREFIX, _("starts with")),
        (GLOB, _("glob (* is any run of characters)")),
    ]

    matching = models.CharField(
        _("matching"), max_length=6, choices=MATCHING_CHOICES, default=PREFIX
    )
    pattern = models.CharField(
        _("pattern"),
        max_length=LOCATION_MAX_LENGTH,
        help_text=_(
            "The path (and query) the URLs start with, such as /tag/, or a glob such as "
            "/products/*/reviews/ or /search?*. Matched against the URL as the sitemap "
            "writes it, without its host."
        ),
    )
    host = models.CharField(
        _("host"),
        max_length=255,
        blank=True,
        help_text=_("Only URLs on this host. Empty: every host."),
    )
    section = models.CharField(
        _("section"),
        max_length=100,
        blank=True,
        help_text=_("Only URLs of this section. Empty: every section."),
    )
    position = models.PositiveIntegerField(
        _("position"),
        default=100,
        help_text=_(
            "Rules apply from the lowest position up: for each value, the first "
            "matching rule that sets it decides."
        ),
    )
    exclude = models.BooleanField(
        _("exclude from the sitemap"),
        default=False,
        help_text=_("Leave the matching URLs out of the sitemap."),
    )
    lastmod = models.DateTimeField(
        _("last modified"),
        null=True,
        blank=True,
        help_text=_(
            "Force the last modification date of the matching URLs. Empty: the section's value."
        ),
    )
    changefreq = _changefreq_field(
        _("A hint most search engines ignore. Empty: the section's value.")
    )
    priority = _priority_field(
        _("A hint most search engines ignore; 0.0 to 1.0. Empty: the section's value.")
    )
    note = models.TextField(
        _("note"), blank=True, help_text=_("Why this rule exists (not published).")
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("changed by"),
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("changed"), auto_now=True)

    # What the row held when read, so a change invalidates where it applied too.
    _loaded_section: str | None = None

    class Meta:
        verbose_name = _("sitemap rule")
        verbose_name_plural = _("sitemap rules")
        ordering = ("position", "pk")
        constraints = (
            models.CheckConstraint(
                condition=Q(pattern__startswith="/"),
                name="sitemapx_rule_pattern_is_path",
                violation_error_message=_("A pattern starts with / (the path, without the host)."),
            ),
            models.CheckConstraint(
                condition=Q(matching__in=[PREFIX, GLOB]),
                name="sitemapx_rule_matching_valid",
                violation_error_message=_("Choose prefix or glob."),
            ),
            *_value_constraints(
                "rule",
                _(
                    "Set at least one of exclude, last modified, change frequency or "
                    "priority; a rule that changes nothing is not needed."
                ),
            ),
        )

    def __str__(self) -> str:
        return self.pattern

    def clean(self) -> None:
        super().clean()
        errors: dict[str, Any] = {}
        if self.pattern:
            try:
                self.pattern = pattern_text(self.matching, self.pattern)
            except ValueError as error:
                errors["pattern"] = ValidationError(str(error), code="invalid_pattern")
        if self.host:
            host = checked_host(self.host.strip())
            if host is None:
                errors["host"] = ValidationError(_("This is not a host name."), code="invalid")
            else:
                self.host = host
        if self.lastmod is not None and self.lastmod > timezone.now():
            errors["lastmod"] = ValidationError(
                _("The last modification cannot be in the future."), code="future_lastmod"
            )
        if errors:
            raise ValidationError(errors)


class PageState(models.Model):
    """One page of a model section: where it starts, and its summary with its generation.

    A model section's pages are ranges of its key: a page holds the rows whose key
    is at least its ``first`` and below the next page's (``first`` is the key
    encoded so that the database orders it as it orders the keys, see
    ``sources.pages``; the first page's is empty, no lower bound). ``rows`` and
    ``lastmod`` are the page's summary. ``changes`` counts the committed changes
    to the page's rows (a saved or deleted row, ``invalidate()``, a split or
    merge), with a cache or without, and ``counted`` is the value it had when
    the summary was computed: the page is counted again when they differ.
    ``generation`` is ``"-"`` for a summary counted so; an older release stored a
    digest of cache generations there, and such a page is counted again once.
    ``fingerprint`` is a digest of the section's configuration (model, key, page
    capacity, query): a different one means the pages are cut again.

    Kept in the database, not the cache: flushing the cache must not move a row to
    another page, which would change every page after it.
    """

    section = models.CharField(max_length=100)
    number = models.PositiveIntegerField()
    first = models.CharField(max_length=255, blank=True)
    rows = models.PositiveIntegerField(default=0)
    # Rows without a lastmod: the page's Last-Modified is sent only when there is none.
    undated = models.PositiveIntegerField(default=0)
    # NULL: the page has no lastmod (as PageSummary.lastmod None), not an empty one.
    lastmod = models.CharField(max_length=40, null=True, blank=True)  # noqa: DJ001
    generation = models.CharField(max_length=40, blank=True)
    changes = models.PositiveBigIntegerField(default=0)
    # NULL: never counted.
    counted = models.PositiveBigIntegerField(null=True, blank=True)
    fingerprint = models.CharField(max_length=40)
    # The page's size in bytes when last built, or estimated when a page over
    # the protocol's byte limit was split; NULL: not known. Only the split and
    # merge rule reads it: the byte limit itself is enforced as a page is built.
    bytes = models.PositiveBigIntegerField(null=True, blank=True)
    # Whether ``bytes`` was measured by building the page over its current range
    # (False: an estimate, or never built since the range last moved). A page that
    # goes over 50 MB, or is built well under it, re-cuts the unmeasured pages after it.
    measured = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("sitemap page")
        verbose_name_plural = _("sitemap pages")
        constraints = (
            models.UniqueConstraint(
                fields=("section", "number"), name="sitemapx_pagestate_number"
            ),
            models.UniqueConstraint(fields=("section", "first"), name="sitemapx_pagestate_first"),
        )

    def __str__(self) -> str:
        return f"{self.section} {self.number}"


class SectionLock(models.Model):
    """The lock a process holds while it changes where a page table's pages start.

    One row per page-table section name (``sources.pages.table_section``),
    locked with ``SELECT ... FOR UPDATE`` by the transaction that cuts the
    section, splits or merges its pages: one writer of a section's pages at a
    time, in every process (see docs/contributing/architecture.md).
    """

    section = models.CharField(max_length=100, unique=True)

    class Meta:
        verbose_name = _("sitemap section lock")
        verbose_name_plural = _("sitemap section locks")

    def __str__(self) -> str:
        return self.section


class OwedGeneration(models.Model):
    """A cache generation to replace, written in the transaction of the change that calls for it.

    A split or merge writes its rows here in the same transaction as its page
    rows, a save inside a transaction its sections' (see ``handlers``); once
    committed, the process replaces the generations and deletes the rows. Rows
    left by a process that died in between are replaced by a sitemap request
    of any process (``sources.pages.settle_owed``).
    """

    name = models.CharField(max_length=255)
    # The transaction that wrote the row: its own process deletes its rows by it.
    batch = models.CharField(max_length=32, db_index=True)
    # When it was written: a sweep leaves alone, for a moment, what a live process is settling.
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("owed cache generation")
        verbose_name_plural = _("owed cache generations")

    def __str__(self) -> str:
        return self.name


class RemovedUrl(models.Model):
    """A URL the sitemap listed and stopped listing, for the removed-pages section.

    Written after the change commits (a row deleted or unpublished, an override
    excluding it), deleted when the URL is listed again; rows older than the
    section's ``days`` are left out and pruned (see ``removed``).
    """

    url = models.CharField(_("URL"), max_length=2048)
    # Unique in the URL's stead (a 2,048-character unique index is refused by MySQL).
    url_hash = models.CharField(max_length=64, unique=True, editable=False)
    host = models.CharField(_("host"), max_length=255)
    removed_at = models.DateTimeField(_("removed"), default=timezone.now)

    class Meta:
        verbose_name = _("removed URL")
        verbose_name_plural = _("removed URLs")
        indexes = (models.Index(fields=["host", "removed_at"], name="sitemapx_removed_host"),)

    def __str__(self) -> str:
        return self.url


class PendingUrl(models.Model):
    """A changed URL waiting to be submitted to IndexNow.

    Rows are added after the change commits and removed once a search engine
    accepted them, or refused them for good (see ``django_sitemapx.indexnow``).
    A URL waiting already is not added again (``indexnow.add_pending``); should two
    processes add it at the same moment, a submission still sends it once per batch.
    """

    url = models.CharField(_("URL"), max_length=2048)
    host = models.CharField(_("host"), max_length=255)
    queued_at = models.DateTimeField(_("queued"), auto_now_add=True)

    class Meta:
        verbose_name = _("URL waiting for IndexNow")
        verbose_name_plural = _("URLs waiting for IndexNow")
        indexes = (models.Index(fields=["host", "id"], name="sitemapx_pending_host"),)

    def __str__(self) -> str:
        return self.url


class ExportPart(models.Model):
    """One part of an export split into tasks (``export.parallel``), while it runs.

    Part 0 of a run is its plan (the destination, the options, the pages in
    the index) and marks the destination taken: one export at a time. Parts
    1 and on each make a range of pages; a worker holding a part beats
    ``heartbeat``, and a part whose worker stopped beating is run again. The
    rows of a run are deleted once it is published.
    """

    run = models.CharField(max_length=32)
    destination = models.CharField(max_length=255)
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=10, default="queued")
    # The claim of the worker running it: only that worker's result is kept.
    token = models.CharField(max_length=32, blank=True, default="")
    heartbeat = models.DateTimeField(null=True)
    attempts = models.PositiveIntegerField(default=0)
    plan = models.JSONField(default=dict)
    result = models.JSONField(null=True)

    class Meta:
        verbose_name = _("sitemap export part")
        constraints = (
            models.UniqueConstraint(fields=["run", "number"], name="sitemapx_exportpart_unique"),
        )
        indexes = (models.Index(fields=["destination"], name="sitemapx_exportpart_dest"),)

    def __str__(self) -> str:
        return f"{self.run}:{self.number}"


class ChangedKey(models.Model):
    """One committed change to a section's rows, for the export to remake only what changed.

    Written with each mark of the page table (``sources.pages.mark_changed``),
    once the change is committed, one ``INSERT`` with no lock on any other row:
    ``key`` is the changed row's key, encoded as the page table encodes keys.
    A row with no ``key`` says its page ``page`` may have changed anywhere,
    with no ``page`` its whole section, with an empty ``section`` every
    section (``invalidate()``, or the log pruned up to ``key``): an export
    then makes those pages whole. See ``sources.changes``.
    """

    id = models.BigAutoField(primary_key=True)
    section = models.CharField(max_length=100)
    page = models.PositiveIntegerField(null=True)
    key = models.CharField(max_length=255, null=True)  # noqa: DJ001
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("changed sitemap row")
        verbose_name_plural = _("changed sitemap rows")
        indexes = (models.Index(fields=["created"], name="sitemapx_changedkey_created"),)

    def __str__(self) -> str:
        return f"{self.section} {self.page} {self.key}"


# (database alias, table) pairs known to exist: each is looked for once per process.
_FOUND_TABLES: set[tuple[str, str]] = set()


def table_exists(model: type[models.Model], using: str) -> bool:
    """Whether ``model``'s table exists in database ``using``.

    Until ``migrate`` creates them, this app's tables are missing while the app
    is installed (or a data migration runs before them): what reads them then
    does without. Once found, a table is not looked for again in this process.
    """
    table = model._meta.db_table
    if (using, table) in _FOUND_TABLES:
        return True
    connection = connections[using]
    with connection.cursor() as cursor:
        names = set(connection.introspection.table_names(cursor))
    # This app's other tables remembered too: each looked for would cost a query of its own.
    ours = {mine._meta.db_table for mine in apps.get_app_config("django_sitemapx").get_models()}
    _FOUND_TABLES.update((using, name) for name in (ours | {table}) & names)
    return table in names
