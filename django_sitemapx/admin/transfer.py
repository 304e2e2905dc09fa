"""CSV export and import of overrides and rules.

An import is validated in full before anything is written: every row is
parsed and cleaned as the admin's form would (``full_clean``), the file's rows
are checked against each other (one override per location), and a single bad
row, named by its line, refuses the whole file. Only then are the rows saved,
in one transaction, each through ``save()`` so the usual signals invalidate the
cache and IndexNow hears of overrides.

Overrides are matched by host and location: a row for a location that has an
override on the row's host (none, without a ``host`` column or with an empty
cell: every host) updates it. Rules are matched by ``id``: a row with the id of an existing rule
updates it, a row without one creates a rule.
"""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, models, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from ..exceptions import InvalidLocation
from ..locations import Origin
from ..locations.hosts import checked_host
from ..locations.keys import location_key
from ..locations.origins import origin_for_request
from ..models import Override, Rule, location_hash
from ..registry import default_registry
from .lookup import place

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

# Bounds an import: the file's size, and its rows (each is cleaned and, for an
# override, placed on its section and page while the editor waits).
MAX_IMPORT_BYTES = 5 * 1024 * 1024
MAX_IMPORT_ROWS = 5_000

# ``host`` came with Override.host: a file without it still imports (every host).
OVERRIDE_COLUMNS = ("location", "exclude", "lastmod", "changefreq", "priority", "note", "host")
# The rule form's fields (admin/rules.py) are these but the id.
RULE_COLUMNS = (
    "id",
    "matching",
    "pattern",
    "host",
    "section",
    "position",
    "exclude",
    "lastmod",
    "changefreq",
    "priority",
    "note",
)
_TRUE = {"1", "true", "yes", "y", "x"}
_FALSE = {"", "0", "false", "no", "n"}
# A cell a spreadsheet would run as a formula is written with a leading quote
# (and read back without it).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def columns_of(model: type[models.Model]) -> tuple[str, ...]:
    """The CSV columns of ``model`` (``Override`` or ``Rule``), in order."""
    return OVERRIDE_COLUMNS if model is Override else RULE_COLUMNS


# -- export -----------------------------------------------------------------------


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


class _Echo:
    def write(self, value: str) -> str:
        return value


def export_rows(model: type[models.Model]) -> Iterator[str]:
    """The CSV lines of every row of ``model``, the header first."""
    columns = columns_of(model)
    writer = csv.writer(_Echo())
    yield writer.writerow(columns)
    for row in model._default_manager.order_by("pk").values_list(*columns).iterator():
        yield writer.writerow([_cell(value) for value in row])


def export_view(model_admin: ModelAdmin[Any], request: HttpRequest) -> StreamingHttpResponse:
    """Every row of the admin's model as a CSV download (view permission)."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    model = model_admin.model
    name = model._meta.model_name
    response = StreamingHttpResponse(export_rows(model), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="sitemap-{name}s.csv"'
    return response


# -- import -----------------------------------------------------------------------


class ImportForm(forms.Form):
    file = forms.FileField(label=_("CSV file"))


@dataclass(frozen=True)
class RowError:
    """What is wrong with one line of the file (0: the file itself)."""

    line: int
    message: str

    def __str__(self) -> str:
        if self.line == 0:
            return self.message
        return str(_("Line %(line)s: %(message)s") % {"line": self.line, "message": self.message})


class ImportRefused(Exception):
    """The file is refused; nothing was written."""

    def __init__(self, errors: list[RowError]) -> None:
        super().__init__(errors)
        self.errors = errors


def _text(data: bytes) -> str:
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportRefused([RowError(0, str(_("The file is larger than 5 MB: split it.")))])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportRefused([RowError(0, str(_("The file is not UTF-8 text.")))]) from None


def _rows(text: str, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    required = {"location"} if columns is OVERRIDE_COLUMNS else {"pattern"}
    unknown = [name for name in header if name not in columns]
    if not header or required - set(header) or unknown:
        message = _(
            "The first line must name the columns, among: %(columns)s (%(required)s required)."
        ) % {"columns": ", ".join(columns), "required": ", ".join(sorted(required))}
        raise ImportRefused([RowError(1, str(message))])
    for record in reader:
        if reader.line_num > MAX_IMPORT_ROWS + 1:
            message = _("At most %(count)s rows are imported at once: split the file.") % {
                "count": f"{MAX_IMPORT_ROWS:,}"
            }
            raise ImportRefused([RowError(reader.line_num, str(message))])
        if None in record:
            raise ImportRefused(
                [RowError(reader.line_num, str(_("This line has more cells than the header.")))]
            )
        cells = {name: (value or "").strip() for name, value in record.items() if name}
        if any(cells.values()):
            yield reader.line_num, cells


def _plain(value: str) -> str:
    return value[1:] if value.startswith("'") and value[1:].startswith(_FORMULA_STARTS) else value


def _boolean(value: str) -> bool:
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValidationError(_("Enter true or false."))


def _moment(value: str) -> datetime.datetime | None:
    if not value:
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        parsed = None
    if parsed is None:
        try:
            day = datetime.date.fromisoformat(value)
        except ValueError:
            raise ValidationError(
                _("Enter a date or time such as 2024-05-01 or 2024-05-01T08:00:00+00:00.")
            ) from None
        parsed = datetime.datetime.combine(day, datetime.time())
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, datetime.UTC)
    return parsed


def _decimal(value: str) -> Decimal | None:
    if not value:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        raise ValidationError(_("Enter a number such as 0.5.")) from None


def _fill(instance: models.Model, cells: dict[str, str]) -> dict[str, list[str]]:
    """Set ``instance``'s fields from ``cells``; the errors of the ones that cannot be read."""
    errors: dict[str, list[str]] = {}
    readers: dict[str, Any] = {
        "exclude": _boolean,
        "lastmod": _moment,
        "priority": _decimal,
        "position": lambda value: int(value) if value else 100,
    }
    for name, value in cells.items():
        if name == "id":
            continue
        try:
            converted = readers[name](value) if name in readers else _plain(value)
        except (ValidationError, ValueError) as error:
            messages = error.messages if isinstance(error, ValidationError) else [str(error)]
            errors[name] = messages
            continue
        setattr(instance, name, converted)
    return errors


def _override_for(cells: dict[str, str]) -> Override:
    try:
        key = location_key(cells["location"])
    except InvalidLocation:
        return Override()  # full_clean() words the location's error
    host = _host_or_none(cells.get("host", ""))
    if host is None:
        return Override()  # full_clean() words the host's error
    existing = Override.objects.filter(location_hash=location_hash(key, host)).first()
    return existing if existing is not None else Override()


def _host_or_none(value: str) -> str | None:
    """The canonical host of a cell (empty: every host); None for what is no host."""
    return checked_host(value.strip()) if value.strip() else ""


def _rule_for(cells: dict[str, str]) -> Rule:
    identifier = cells.get("id", "")
    if not identifier:
        return Rule()
    if not identifier.isdigit():
        raise ValidationError({"id": [str(_("Enter the id of a rule, or leave it empty."))]})
    existing = Rule.objects.filter(pk=int(identifier)).first()
    if existing is None:
        raise ValidationError(
            {"id": [str(_("No rule has this id: leave it empty to create one."))]}
        )
    return existing


def validate_import(model: type[models.Model], data: bytes) -> list[tuple[int, models.Model]]:
    """Every row of ``data`` as an instance ready to save, by line; raises ``ImportRefused``.

    Nothing is written. Every row is checked, so the editor sees every error at once.
    """
    columns = columns_of(model)
    text = _text(data)
    errors: list[RowError] = []
    ready: list[tuple[int, models.Model]] = []
    seen: dict[tuple[str, str], int] = {}
    for line, cells in _rows(text, columns):
        try:
            instance: models.Model = (
                _override_for(cells) if model is Override else _rule_for(cells)
            )
        except ValidationError as error:
            errors.extend(_row_errors(line, error))
            continue
        unreadable = _fill(instance, cells)
        try:
            instance.full_clean(exclude=list(unreadable))
        except ValidationError as error:
            errors.extend(_row_errors(line, error))
        if (
            isinstance(instance, Rule)
            and instance.section
            and instance.section not in default_registry.sections
        ):
            message = _("no registered section is named %(name)s") % {"name": instance.section}
            errors.append(RowError(line, f"section: {message}"))
        errors.extend(
            RowError(line, f"{name}: {message}")
            for name, messages in unreadable.items()
            for message in messages
        )
        if isinstance(instance, Override) and instance.location:
            key = _key_or_none(instance.location)
            host = _host_or_none(instance.host)
            with_key = None if key is None or host is None else (host, key)
            if with_key is not None:
                if with_key in seen:
                    message = _("the location and host of line %(line)s again") % {
                        "line": seen[with_key]
                    }
                    errors.append(RowError(line, f"location: {message}"))
                seen.setdefault(with_key, line)
        ready.append((line, instance))
    if errors:
        raise ImportRefused(errors)
    if not ready:
        raise ImportRefused([RowError(0, str(_("The file holds no row.")))])
    return ready


def _key_or_none(location: str) -> str | None:
    try:
        return location_key(location)
    except InvalidLocation:
        return None


def _row_errors(line: int, error: ValidationError) -> Iterable[RowError]:
    if hasattr(error, "error_dict"):
        for name, messages in error.message_dict.items():
            label = "" if name == "__all__" else f"{name}: "
            for message in messages:
                yield RowError(line, f"{label}{message}")
    else:
        for message in error.messages:
            yield RowError(line, message)


def save_import(
    request: HttpRequest, model_admin: ModelAdmin[Any], rows: list[tuple[int, models.Model]]
) -> tuple[int, int]:
    """Save validated rows in one transaction: (created, updated)."""
    user = request.user if request.user.is_authenticated else None
    origin = origin_for_request(request)
    created = updated = 0
    with transaction.atomic():
        for _line, instance in rows:
            adding = instance.pk is None
            instance.changed_by = user  # type: ignore[attr-defined]
            if isinstance(instance, Override):
                on = Origin(origin.scheme, instance.host) if instance.host else origin
                instance.section, instance.page = place(default_registry, instance.location, on)
            instance.save()
            if adding:
                model_admin.log_addition(request, instance, [{"added": {}}])
                created += 1
            else:
                model_admin.log_change(request, instance, [{"changed": {"fields": ["csv"]}}])
                updated += 1
    return created, updated


def import_view(model_admin: ModelAdmin[Any], request: HttpRequest) -> HttpResponse:
    """Upload a CSV file: every row validated before any is saved (add and change permission)."""
    if not (
        model_admin.has_add_permission(request) and model_admin.has_change_permission(request)
    ):
        raise PermissionDenied
    model = model_admin.model
    opts = model._meta
    form = ImportForm(request.POST or None, request.FILES or None)
    errors: list[RowError] = []
    if request.method == "POST" and form.is_valid():
        try:
            rows = validate_import(model, form.cleaned_data["file"].read(MAX_IMPORT_BYTES + 1))
            created, updated = save_import(request, model_admin, rows)
        except ImportRefused as refused:
            errors = refused.errors
        except IntegrityError:
            # Another editor saved a conflicting row meanwhile: the transaction kept nothing.
            message = _("A row changed while the file was imported: nothing was saved; try again.")
            errors = [RowError(0, str(message))]
        else:
            model_admin.message_user(
                request,
                ngettext(
                    "%(created)d row created, %(updated)d updated.",
                    "%(created)d rows created, %(updated)d updated.",
                    created,
                )
                % {"created": created, "updated": updated},
            )
            return HttpResponseRedirect(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
            )
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": opts,
        "title": _("Import %(name)s from CSV") % {"name": opts.verbose_name_plural},
        "form": form,
        "errors": errors,
        "columns": columns_of(model),
        "max_rows": MAX_IMPORT_ROWS,
    }
    return TemplateResponse(request, "admin/django_sitemapx/import.html", context)


class CsvTransfer:
    """The CSV export and import pages of a model admin, its change list linking them.

    Mixed into ``OverrideAdmin`` and ``RuleAdmin`` (before ``ModelAdmin``): their
    URLs are ``django_sitemapx_<model>_export`` and ``..._import``.
    """

    def transfer_urls(self) -> list[URLPattern]:
        """The export and import URLs, for the admin's ``get_urls()``."""
        model_admin = cast("ModelAdmin[Any]", self)
        wrap = model_admin.admin_site.admin_view
        name = model_admin.model._meta.model_name
        return [
            path("export/", wrap(self.export_view), name=f"django_sitemapx_{name}_export"),
            path("import/", wrap(self.import_view), name=f"django_sitemapx_{name}_import"),
        ]

    def export_view(self, request: HttpRequest) -> StreamingHttpResponse:
        return export_view(cast("ModelAdmin[Any]", self), request)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        return import_view(cast("ModelAdmin[Any]", self), request)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        model_admin = cast("ModelAdmin[Any]", self)
        extra_context = {
            **(extra_context or {}),
            "has_change_permission": model_admin.has_change_permission(request),
        }
        return super().changelist_view(request, extra_context)  # type: ignore[misc]
