"""The admin of rules: URL patterns that exclude URLs or set their values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.urls import URLPattern
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from ..models import Rule
from ..registry import default_registry
from . import transfer
from .hints import HINTS_FIELDSET, RULE_HELP_TEXTS

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Rule]
    _ModelForm = forms.ModelForm[Rule]
else:
    _ModelAdmin = admin.ModelAdmin  # not subscriptable at run time
    _ModelForm = forms.ModelForm


def _every(text: Any) -> Any:
    return format_html('<span class="quiet">{}</span>', text)


class RuleForm(_ModelForm):
    """A rule, its section chosen among the registered ones."""

    class Meta:
        model = Rule
        fields = transfer.RULE_COLUMNS[1:]  # what a CSV row holds, but the id
        widgets = {"pattern": forms.TextInput(attrs={"class": "vLargeTextField", "size": 80})}
        help_texts = RULE_HELP_TEXTS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        sections = list(default_registry.sections)
        current = self.instance.section if self.instance is not None else ""
        if current and current not in sections:
            sections.append(current)  # a section no longer registered stays choosable
        self.fields["section"] = forms.ChoiceField(
            label=_("section"),
            required=False,
            choices=[("", _("every section")), *((name, name) for name in sections)],
            help_text=Rule._meta.get_field("section").help_text,
        )


@admin.register(Rule)
class RuleAdmin(transfer.CsvTransfer, _ModelAdmin):
    """Editors' rules: the list in the order they apply, and the form."""

    form = RuleForm
    list_display = (
        "pattern",
        "matching",
        "applies_to",
        "listed",
        "effective_lastmod",
        "effective_changefreq",
        "effective_priority",
        "position",
        "last_changed",
    )
    list_display_links = ("pattern",)
    list_filter = ("matching", "exclude", "section")
    search_fields = ("pattern", "note")
    readonly_fields = ("changed_by", "created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("matching", "pattern", "host", "section", "position")}),
        (_("What matching URLs get"), {"fields": ("exclude", "lastmod")}),
        HINTS_FIELDSET,
        (None, {"fields": ("note",)}),
        (_("History"), {"fields": ("changed_by", "created_at", "updated_at")}),
    )

    class Media:
        css = {"all": ["django_sitemapx/admin.css"]}

    @admin.display(description=_("applies to"), ordering="section")
    def applies_to(self, obj: Rule) -> Any:
        return format_html(
            "{}<br>{}",
            obj.host or _every(_("every host")),
            obj.section or _every(_("every section")),
        )

    @admin.display(description=_("in the sitemap"), boolean=True, ordering="-exclude")
    def listed(self, obj: Rule) -> bool:
        return not obj.exclude

    @admin.display(description=_("last modified"), ordering="lastmod")
    def effective_lastmod(self, obj: Rule) -> Any:
        return obj.lastmod if obj.lastmod is not None else _every(_("section's value"))

    @admin.display(description=_("change frequency (hint)"), ordering="changefreq")
    def effective_changefreq(self, obj: Rule) -> Any:
        return obj.get_changefreq_display() if obj.changefreq else _every(_("section's value"))

    @admin.display(description=_("priority (hint)"), ordering="priority")
    def effective_priority(self, obj: Rule) -> Any:
        return obj.priority if obj.priority is not None else _every(_("section's value"))

    @admin.display(description=_("last changed"), ordering="updated_at")
    def last_changed(self, obj: Rule) -> Any:
        when = date_format(timezone.localtime(obj.updated_at), "SHORT_DATETIME_FORMAT")
        if obj.changed_by is None:
            return when
        return format_html("{}<br>{}", obj.changed_by.get_username(), when)

    def get_fieldsets(self, request: HttpRequest, obj: Rule | None = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)
        return fieldsets if obj is not None else fieldsets[:-1]  # no history yet

    def save_model(self, request: HttpRequest, obj: Rule, form: Any, change: bool) -> None:
        obj.changed_by = request.user if request.user.is_authenticated else None
        super().save_model(request, obj, form, change)

    def get_urls(self) -> list[URLPattern]:
        return [*self.transfer_urls(), *super().get_urls()]
