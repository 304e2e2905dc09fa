"""Editors' per-URL overrides of what the sitemap says."""

from __future__ import annotations

import contextlib
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .exceptions import InvalidLocation
from .locations.keys import location_key
from .values import CHANGEFREQS

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
_LOCATION_ERRORS = {
    "empty": _("Enter a path such as /about/ or a full URL."),
    "control_characters": _("The location contains control characters."),
    "not_http": _("Enter a path starting with / or a full http:// or https:// URL."),
}


def validate_location(value: str) -> None:
    """Refuse what cannot be a path or an http(s) URL."""
    try:
        location_key(value)
    except InvalidLocation as error:
        raise ValidationError(_LOCATION_ERRORS[error.code], code=error.code) from None


class Override(models.Model):
    """What the sitemap says about one URL, whatever its source says.

    Every value is optional: an empty field keeps the source's value. The
    ``location`` is stored normalised (see ``locations.keys.location_key``), so
    ``/a/``, ``/a`` and ``https://host/a/`` are one row.
    """

    location = models.CharField(
        _("location"),
        max_length=2048,
        unique=True,
        validators=[validate_location],
        error_messages={
            "unique": _(
                "An override for this URL already exists (locations are compared "
                "without host and trailing slash)."
            )
        },
        help_text=_(
            "A path such as /about/ or the full URL. Stored without host and trailing "
            "slash, so /about/ and https://example.com/about are the same override."
        ),
    )
    priority = models.DecimalField(
        _("priority"),
        max_digits=2,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[
            MinValueValidator(Decimal("0.0"), message=_PRIORITY_RANGE),
            MaxValueValidator(Decimal("1.0"), message=_PRIORITY_RANGE),
        ],
        help_text=_("0.0 to 1.0, one decimal. Empty: the section's value."),
    )
    changefreq = models.CharField(
        _("change frequency"),
        max_length=7,
        choices=CHANGEFREQ_CHOICES,
        blank=True,
        default="",
        help_text=_("Empty: the section's value."),
    )
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

    class Meta:
        verbose_name = _("sitemap override")
        verbose_name_plural = _("sitemap overrides")
        ordering = ("location",)
        constraints = (
            models.CheckConstraint(
                condition=Q(location__startswith="/"),
                name="sitemapx_override_location_is_path",
                violation_error_message=_("The location must be stored as a path."),
            ),
            models.CheckConstraint(
                condition=Q(priority__isnull=True) | Q(priority__gte=0, priority__lte=1),
                name="sitemapx_override_priority_range",
                violation_error_message=_PRIORITY_RANGE,
            ),
            models.CheckConstraint(
                condition=Q(changefreq__in=["", *CHANGEFREQS]),
                name="sitemapx_override_changefreq_valid",
                violation_error_message=_("Choose one of the seven change frequencies."),
            ),
            models.CheckConstraint(
                condition=Q(exclude=True)
                | Q(priority__isnull=False)
                | ~Q(changefreq="")
                | Q(lastmod__isnull=False),
                name="sitemapx_override_changes_something",
                violation_error_message=_(
                    "Set at least one of priority, change frequency, exclude or last "
                    "modified; an override that changes nothing is not needed."
                ),
            ),
        )
        indexes = (models.Index(fields=["section", "page"], name="sitemapx_override_page"),)

    def __str__(self) -> str:
        return self.location

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.location = location_key(self.location)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        super().clean()
        if self.location:
            # An invalid location is reported by the field validator.
            with contextlib.suppress(InvalidLocation):
                self.location = location_key(self.location)
        if self.lastmod is not None and self.lastmod > timezone.now():
            raise ValidationError(
                {"lastmod": _("The last modification cannot be in the future.")},
                code="future_lastmod",
            )


class PendingUrl(models.Model):
    """A changed URL waiting to be submitted to IndexNow.

    Rows are added after the change commits and removed once a search engine
    accepted them, or refused them for good (see ``django_sitemapx.indexnow``).
    A URL may appear more than once: a submission sends it once per batch.
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
