"""The override admin, with the URL inspector and the sitemap overview."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from ..exceptions import InvalidLocation
from ..locations import URL_CONTROL_CHARS, Origin
from ..locations.hosts import checked_host
from ..locations.keys import location_key
from ..locations.origins import origin_for_request
from ..models import CHANGEFREQ_CHOICES, Override, location_hash
from ..overrides import Place, Shown, Target, send_overrides_changed, shown
from ..registry import default_registry
from ..values import CHANGEFREQS
from . import browse, transfer, views
from . import rules as rules  # registers RuleAdmin
from .hints import HELP_TEXTS, HINTS_FIELDSET
from .lookup import place

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Override]
else:
    _ModelAdmin = admin.ModelAdmin  # not subscriptable at run time


class OverrideActionForm(ActionForm):
    """The action bar, with the value the "set" actions apply."""

    # Plain text here: Django answers an invalid action form with "No action
    # selected", so the value is validated by the action, which can say why.
    priority = forms.CharField(
        label=_("priority (hint)"),
        required=False,
        widget=forms.TextInput(attrs={"size": 4, "placeholder": "0.5"}),
    )
    changefreq = forms.ChoiceField(
        label=_("change frequency (hint)"),
        required=False,
        choices=[("", "---------"), *CHANGEFREQ_CHOICES],
    )


class SectionFilter(admin.SimpleListFilter):
    """Filter by the section the URL was found in when the override was saved."""

    title = _("section")
    parameter_name = "section"
    none_value = "-"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [
            *((name, name) for name in default_registry.sections),
            (self.none_value, _("not found in the sitemap")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(section="" if value == self.none_value else value)


class HostFilter(admin.SimpleListFilter):
    """Filter by the host an override applies on, or those of every host."""

    title = _("host")
    parameter_name = "host"
    every_value = "-"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        hosts = Override.objects.exclude(host="").order_by("host").values_list("host", flat=True)
        return [
            (self.every_value, _("every host")),
            *((host, host) for host in hosts.distinct()),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(host="" if value == self.every_value else value)


def _section_value() -> str:
    return format_html('<span class="quiet">{}</span>', _("section's value"))


@admin.register(Override)
class OverrideAdmin(transfer.CsvTransfer, _ModelAdmin):
    """Editors' overrides: list, search, filters, bulk actions and the two pages."""

    # What search engines read first: whether the URL is listed, then its lastmod;
    # change frequency and priority last, as the hints they are (see admin.hints).
    list_display = (
        "url",
        "listed",
        "effective_lastmod",
        "effective_changefreq",
        "effective_priority",
        "placed_on",
        "last_changed",
    )
    list_filter = ("exclude", SectionFilter, HostFilter, "changefreq")
    search_fields = ("location", "host")
    readonly_fields = ("placed_on", "changed_by", "created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("location", "host", "exclude", "lastmod")}),
        HINTS_FIELDSET,
        (None, {"fields": ("note",)}),
        (_("History"), {"fields": ("placed_on", "changed_by", "created_at", "updated_at")}),
    )
    action_form = OverrideActionForm

    class Media:
        # Long URLs wrap, so the right-hand columns stay on screen with the sidebar open.
        css = {"all": ["django_sitemapx/admin.css"]}

    actions = ("exclude_urls", "include_urls", "set_priority", "set_changefreq", "place_again")
    list_select_related = ("changed_by",)

    # -- list columns ---------------------------------------------------------

    @admin.display(description=_("location"), ordering="location")
    def url(self, obj: Override) -> Any:
        # The host in the location's column, not a column of its own: the list
        # must fit beside the sidebar and the filters from 1280 px wide.
        if not obj.host:
            return obj.location
        on = _("on %(host)s") % {"host": obj.host}
        return format_html('{} <span class="quiet host">{}</span>', obj.location, on)

    @admin.display(description=_("priority (hint)"), ordering="priority")
    def effective_priority(self, obj: Override) -> Any:
        return _section_value() if obj.priority is None else obj.priority

    @admin.display(description=_("change frequency (hint)"), ordering="changefreq")
    def effective_changefreq(self, obj: Override) -> Any:
        return obj.get_changefreq_display() if obj.changefreq else _section_value()

    @admin.display(description=_("in the sitemap"), boolean=True, ordering="-exclude")
    def listed(self, obj: Override) -> bool | None:
        # A tick means "listed", a cross "excluded by this override", and the
        # unknown icon a URL no section was found to list when it was saved.
        if obj.exclude:
            return False
        return True if obj.section else None

    @admin.display(description=_("last modified"), ordering="lastmod")
    def effective_lastmod(self, obj: Override) -> Any:
        return obj.lastmod if obj.lastmod is not None else _section_value()

    @admin.display(description=_("last changed"), ordering="updated_at")
    def last_changed(self, obj: Override) -> Any:
        # One column for who and when, so the list fits beside the sidebar and filters.
        when = date_format(timezone.localtime(obj.updated_at), "SHORT_DATETIME_FORMAT")
        if obj.changed_by is None:
            return when
        return format_html("{}<br>{}", obj.changed_by.get_username(), when)

    @admin.display(description=_("section and page"), ordering="section")
    def placed_on(self, obj: Override) -> Any:
        if not obj.section:
            return _("not found in the sitemap")
        return _("%(section)s, page %(page)s") % {"section": obj.section, "page": obj.page}

    def get_fieldsets(self, request: HttpRequest, obj: Override | None = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)
        return fieldsets if obj is not None else fieldsets[:-1]  # no history yet

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "location":
            kwargs["widget"] = forms.TextInput(attrs={"class": "vLargeTextField", "size": 80})
        if db_field.name == "host":
            kwargs["widget"] = forms.TextInput(attrs={"size": 40, "placeholder": "example.com"})
        if db_field.name in HELP_TEXTS:
            kwargs["help_text"] = HELP_TEXTS[db_field.name]
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    # -- saving ---------------------------------------------------------------

    def save_model(self, request: HttpRequest, obj: Override, form: Any, change: bool) -> None:
        obj.changed_by = request.user if request.user.is_authenticated else None
        origin = _origin_of(obj, origin_for_request(request))
        obj.section, obj.page = place(default_registry, obj.location, origin)
        super().save_model(request, obj, form, change)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Override], search_term: str
    ) -> tuple[QuerySet[Override], bool]:
        if URL_CONTROL_CHARS.search(search_term):
            # No location holds one (location_key refuses them), and PostgreSQL
            # refuses a NUL in a query: nothing matches.
            return queryset.none(), False
        results, duplicates = super().get_search_results(request, queryset, search_term)
        # A pasted URL finds its override whatever trailing slash it has: the one of
        # every host, and the one of the URL's own host.
        try:
            key = location_key(search_term)
        except InvalidLocation:
            return results, duplicates
        digests = [location_hash(key)]
        host = checked_host(urlsplit(search_term.strip()).netloc)
        if host:
            digests.append(location_hash(key, host))
        return results | queryset.filter(location_hash__in=digests), duplicates

    # -- bulk actions ---------------------------------------------------------

    @admin.action(
        description=_("Exclude the selected URLs from the sitemap"),
        permissions=["change"],
    )
    def exclude_urls(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        count = self._update(request, queryset, exclude=True)
        self.message_user(
            request,
            ngettext("%d URL excluded.", "%d URLs excluded.", count) % count,
            messages.SUCCESS,
        )

    @admin.action(
        description=_("Include the selected URLs in the sitemap again"),
        permissions=["change"],
    )
    def include_urls(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        # An override that only excluded its URL would change nothing: delete it.
        empty = queryset.filter(
            exclude=True, priority__isnull=True, changefreq="", lastmod__isnull=True
        )
        if not self.has_delete_permission(request):
            queryset = queryset.exclude(pk__in=empty.values("pk"))
            empty = empty.none()
        with transaction.atomic():
            deleted = list(empty)
            doomed = Override.objects.filter(pk__in=[row.pk for row in deleted])
            self.log_deletions(request, doomed)
            _send(deleted)
            doomed.delete()
            count = self._update(request, queryset, exclude=False) + len(deleted)
        self.message_user(
            request,
            ngettext("%d URL included again.", "%d URLs included again.", count) % count,
            messages.SUCCESS,
        )

    @admin.action(description=_("Set the priority of the selected URLs"), permissions=["change"])
    def set_priority(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        field = forms.DecimalField(
            min_value=Decimal("0.0"), max_value=Decimal("1.0"), max_digits=2, decimal_places=1
        )
        raw = request.POST.get("priority", "")
        if not raw.strip():
            self.message_user(request, _("Enter a priority next to the action."), messages.ERROR)
            return
        try:
            priority = field.clean(raw)
        except ValidationError as error:
            message = _("Priority %(value)s: %(errors)s") % {
                "value": raw,
                "errors": " ".join(error.messages),
            }
            self.message_user(request, message, messages.ERROR)
            return
        count = self._update(request, queryset, priority=priority)
        self.message_user(
            request,
            ngettext("Priority set on %d URL.", "Priority set on %d URLs.", count) % count,
            messages.SUCCESS,
        )

    @admin.action(
        description=_("Set the change frequency of the selected URLs"),
        permissions=["change"],
    )
    def set_changefreq(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        changefreq = request.POST.get("changefreq", "")
        if changefreq not in CHANGEFREQS:
            message = _("Choose a change frequency next to the action.")
            self.message_user(request, message, messages.ERROR)
            return
        count = self._update(request, queryset, changefreq=changefreq)
        self.message_user(
            request,
            ngettext("Change frequency set on %d URL.", "Change frequency set on %d URLs.", count)
            % count,
            messages.SUCCESS,
        )

    @admin.action(
        description=_("Find the section and page of the selected URLs again"),
        permissions=["change"],
    )
    def place_again(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        # Placement is stored at save time; items of in-memory sections move
        # between pages, and rows change URL, so editors can refresh it.
        origin = origin_for_request(request)
        changes: list[tuple[str | Target, list[Place | None]]] = []
        before: dict[str | Target, Shown | None] = {}
        for row in queryset.select_related(None).only(*_LOADED):
            section, page = place(default_registry, row.location, _origin_of(row, origin))
            if (section, page) != (row.section, row.page):
                Override.objects.filter(pk=row.pk).update(section=section, page=page)
                target = (row.host, row.location)
                changes.append((target, [(row.section, row.page), (section, page)]))
                before[target] = shown(row)  # what it shows does not change
        transaction.on_commit(lambda: send_overrides_changed(Override, changes, before))
        moved = len(changes)
        self.message_user(
            request,
            ngettext("%d override moved.", "%d overrides moved.", moved) % moved,
            messages.SUCCESS,
        )

    def _update(self, request: HttpRequest, queryset: QuerySet[Override], **values: Any) -> int:
        rows = list(queryset.select_related(None).only(*_LOADED))
        user = request.user if request.user.is_authenticated else None
        with transaction.atomic():
            count = Override.objects.filter(pk__in=[row.pk for row in rows]).update(
                changed_by=user, updated_at=timezone.now(), **values
            )
            for row in rows:
                self.log_change(request, row, [{"changed": {"fields": sorted(values)}}])
            _send(rows)
        return count

    # -- extra pages ----------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("inspect/", wrap(self.inspect_view), name="django_sitemapx_inspect"),
            path("overview/", wrap(self.overview_view), name="django_sitemapx_overview"),
            *self.transfer_urls(),
            path(
                "browse/<str:section>/",
                wrap(self.browse_section_view),
                name="django_sitemapx_browse_section",
            ),
            path(
                "browse/<str:section>/<int:number>/",
                wrap(self.browse_page_view),
                name="django_sitemapx_browse_page",
            ),
            *super().get_urls(),
        ]

    def inspect_view(self, request: HttpRequest) -> Any:
        return views.inspect(self, request)

    def overview_view(self, request: HttpRequest) -> Any:
        return views.overview(self, request)

    def browse_section_view(self, request: HttpRequest, section: str) -> Any:
        return browse.section_pages(self, request, section)

    def browse_page_view(self, request: HttpRequest, section: str, number: int) -> Any:
        return browse.page_urls(self, request, section, number)


# The fields of an override a bulk action reads: where it is placed, and what it
# shows before the change (``overrides_changed``'s ``before``).
_LOADED = (
    "pk",
    "host",
    "location",
    "section",
    "page",
    "exclude",
    "lastmod",
    "changefreq",
    "priority",
)


def _origin_of(override: Override, origin: Origin) -> Origin:
    """The origin an override is placed from: its own host's, else the admin's."""
    return Origin(origin.scheme, override.host) if override.host else origin


def _send(rows: list[Override]) -> None:
    changes: list[tuple[str | Target, list[Place | None]]] = [
        ((row.host, row.location), [(row.section, row.page)]) for row in rows
    ]
    before: dict[str | Target, Shown | None] = {
        (row.host, row.location): shown(row) for row in rows
    }
    transaction.on_commit(lambda: send_overrides_changed(Override, changes, before))
