"""Checks of the sources of every registry: E101-E111, W101-W102."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, FieldError
from django.db import DatabaseError, models
from django.http.request import validate_host
from django.urls import NoReverseMatch, reverse

from ..exceptions import SourceConfigurationError
from ..locations.hosts import host_name
from ..registry import all_registries
from ..sources import ModelSource, Source, StaticSource
from ..sources.codecs import MAX_STRING_KEY, key_kind, key_model_field
from .messages import Messages, error


def check_sources(**kwargs: Any) -> Messages:
    """Every source of every registry, the default one and custom ones."""
    errors: Messages = []
    for registry in list(all_registries):
        for source in registry:
            errors += check_source(source)
    return errors


def check_source(source: Source) -> Messages:
    """The messages about one source: built-in checks, then its own ``check()``."""
    errors: Messages = []
    try:
        source.validate()
    except SourceConfigurationError as exc:
        errors.append(error(f"Section {source.section!r}: {exc}.", "E101", obj=source))
    if isinstance(source, StaticSource):
        errors += _check_static(source)
    if isinstance(source, ModelSource):
        errors += _check_model_source(source)
    errors += _check_sites(source)
    return errors + source.check()


def _check_sites(source: Source) -> Messages:
    try:
        selection = source.site_selection()
    except ValueError:  # reported as E101
        return []
    if selection is None:
        return []
    errors: Messages = []
    if selection.site_ids and not apps.is_installed("django.contrib.sites"):
        errors.append(
            error(
                f"Section {source.section!r} is limited to site IDs "
                f"{sorted(selection.site_ids)}, but django.contrib.sites is not installed.",
                "E108",
                hint="Add django.contrib.sites to INSTALLED_APPS, or name the hosts instead.",
                obj=source,
            )
        )
    allowed = settings.ALLOWED_HOSTS
    for host in sorted(selection.hosts):
        if allowed and not validate_host(host_name(host), allowed):
            errors.append(
                checks.Warning(
                    f"Section {source.section!r} is limited to host {host!r}, which "
                    "ALLOWED_HOSTS refuses: it is never served there.",
                    hint="Add the host to ALLOWED_HOSTS, or correct the sites option.",
                    obj=source,
                    id="django_sitemapx.W102",
                )
            )
    return errors


def check_site_ids(databases: Any = None, **kwargs: Any) -> Messages:
    """Site IDs named by sources that no ``Site`` has (needs the database)."""
    if not databases or not apps.is_installed("django.contrib.sites"):
        return []
    from django.contrib.sites.models import Site

    errors: Messages = []
    for registry in list(all_registries):
        for source in registry:
            try:
                selection = source.site_selection()
            except ValueError:
                continue
            if selection is None or not selection.site_ids:
                continue
            try:
                known = set(
                    Site.objects.filter(pk__in=selection.site_ids).values_list("pk", flat=True)
                )
            except DatabaseError:  # not migrated yet (migrate runs the checks first)
                return []
            for site_id in sorted(selection.site_ids - known):
                errors.append(
                    error(
                        f"Section {source.section!r} is limited to site ID {site_id}, which "
                        "no django.contrib.sites Site has.",
                        "E109",
                        hint="Create the site, or correct the sites option.",
                        obj=source,
                    )
                )
    return errors


def _check_static(source: StaticSource) -> Messages:
    errors: Messages = []
    for item in source.url_names:
        name, kwargs = item if isinstance(item, tuple) else (item, {})
        try:
            reverse(name, kwargs=dict(kwargs))
        except NoReverseMatch:
            errors.append(
                error(
                    f"URL name {item!r} of section {source.section!r} cannot be reversed.",
                    "E102",
                    hint="Check the name (and namespace) in your URLconf.",
                    obj=source,
                )
            )
    return errors


def _check_model_source(source: ModelSource) -> Messages:
    if source.model is None:
        return [error(f"Section {source.section!r} has no model.", "E103", obj=source)]
    if source.uses_instances and not hasattr(source.model, "get_absolute_url"):
        return [
            error(
                f"Section {source.section!r} has no way to build a location: "
                f"{source.model.__name__} has no get_absolute_url(), and the section sets "
                "neither url_name nor location.",
                "E111",
                hint="Set url_name and url_kwargs (fastest), override location(row), or "
                "give the model a get_absolute_url() method.",
                obj=source,
            )
        ]
    errors = _check_key(source) + _check_lastmod_field(source)
    if not errors:
        errors += _check_query(source)
    if source.url_name is not None and not errors:
        try:
            source.compiled_url()
        except NoReverseMatch:
            errors.append(
                error(
                    f"Section {source.section!r}: URL name {source.url_name!r} cannot be "
                    f"reversed with keyword arguments {sorted(source.url_fields())}.",
                    "E106",
                    hint="url_kwargs maps each URL keyword argument to a field name.",
                    obj=source,
                )
            )
    if source.uses_instances:
        errors.append(
            checks.Warning(
                f"Section {source.section!r} builds a model instance per URL to call "
                "get_absolute_url().",
                hint="Set url_name and url_kwargs, or override location(row), to stream "
                "plain rows.",
                obj=source,
                id="django_sitemapx.W101",
            )
        )
    return errors


def _check_key(source: ModelSource) -> Messages:
    assert source.model is not None
    pk = source.model._meta.pk
    if source.key_field == "pk" and pk is not None and not pk.concrete:
        return [
            error(
                f"Section {source.section!r}: the model's primary key is composite; pages "
                "need a single key.",
                "E104",
                hint="Set key_field to a unique integer, UUID or string field of the model.",
                obj=source,
            )
        ]
    field = key_model_field(source.model, source.key_name)
    declared = _declared_field(source.model, source.key_name)
    unique = declared is not None and bool(declared.unique or declared.primary_key)
    if unique and key_kind(field) is not None:
        return []
    return [
        error(
            f"Section {source.section!r}: key_field {source.key_field!r} must be a unique "
            "integer, UUID or string field of the model.",
            "E104",
            hint="Pages are ranges of one unique, orderable key: an integer (up to 64-bit), "
            f"a UUID, or a string of at most {MAX_STRING_KEY} characters with the "
            "database's default collation.",
            obj=source,
        )
    ]


def _declared_field(model: type[models.Model], name: str) -> Any:
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def _check_lastmod_field(source: ModelSource) -> Messages:
    assert source.model is not None
    if source.lastmod_field is None:
        return []
    try:
        field = source.model._meta.get_field(source.lastmod_field)
    except FieldDoesNotExist:
        field = None
    if isinstance(field, models.DateField):
        return []
    return [
        error(
            f"Section {source.section!r}: lastmod_field {source.lastmod_field!r} is not a "
            "date or datetime field of the model.",
            "E105",
            obj=source,
        )
    ]


def _check_query(source: ModelSource) -> Messages:
    try:
        source.rows_queryset().query.sql_with_params()
    except (FieldError, FieldDoesNotExist) as exc:
        return [
            error(
                f"Section {source.section!r}: {exc}",
                "E107",
                hint="Check fields and url_kwargs.",
                obj=source,
            )
        ]
    return []
