"""E301-E304, W301: the settings of exports run as tasks and scheduled after changes; E730-E731."""

from __future__ import annotations

from typing import Any

from django.core import checks

from ..compat import backend_aliases, backend_class_path, tasks_module
from ..conf import app_settings
from .messages import Messages, error, is_positive_number, not_a_bool

# export_changed's arguments, with the type each must have.
_ON_CHANGE_OPTIONS = {"output_dir": str, "storage": str, "base_url": str, "gzip": bool}


def check_export(**kwargs: Any) -> Messages:
    """The export's task settings (registered in ``apps.py``)."""
    messages: Messages = []
    lease = app_settings.EXPORT_LEASE
    if not is_positive_number(lease):
        messages.append(
            error(f"SITEMAPX_EXPORT_LEASE must be a positive number, not {lease!r}.", "E302")
        )
    debounce = app_settings.EXPORT_DEBOUNCE
    if not (is_positive_number(debounce) or debounce == 0) or isinstance(debounce, bool):
        messages.append(
            error(
                f"SITEMAPX_EXPORT_DEBOUNCE must be a number of seconds, 0 or more, not "
                f"{debounce!r}.",
                "E303",
            )
        )
    messages += not_a_bool(
        "EXPORT_SPLICE",
        app_settings.EXPORT_SPLICE,
        "E730",
        hint="True logs each saved row's key so that exports splice changed pages.",
    )
    messages += not_a_bool(
        "EXPORT_SPARES",
        app_settings.EXPORT_SPARES,
        "E731",
        hint="True keeps each spliced page's previous file to splice over; False saves the room.",
    )
    on_change = app_settings.EXPORT_ON_CHANGE
    if on_change is not None:
        messages += _check_on_change(on_change)
    messages += _check_backend(required=on_change is not None)
    return messages


def _check_on_change(options: Any) -> Messages:
    problem = None
    if not isinstance(options, dict):
        problem = f"not {options!r}"
    else:
        unknown = sorted(set(options) - set(_ON_CHANGE_OPTIONS))
        wrong = sorted(
            name
            for name, kind in _ON_CHANGE_OPTIONS.items()
            if name in options and not isinstance(options[name], kind)
        )
        if unknown:
            problem = f"it has unknown keys {', '.join(map(repr, unknown))}"
        elif wrong:
            problem = f"{', '.join(map(repr, wrong))} has the wrong type"
        elif not (
            options.get("output_dir") or options.get("storage") or app_settings.EXPORT_STORAGE
        ):
            problem = "it names no output_dir nor storage, and SITEMAPX_EXPORT_STORAGE is unset"
    if problem is None:
        return []
    return [
        error(
            f"SITEMAPX_EXPORT_ON_CHANGE must be None or a dict of export_changed's arguments: "
            f"{problem}.",
            "E304",
            hint='For example {"output_dir": "/srv/sitemaps", "base_url": "https://example.com"}.',
        )
    ]


def _check_backend(*, required: bool) -> Messages:
    alias = app_settings.EXPORT_TASK_BACKEND
    if not isinstance(alias, str):
        return [
            error(f"SITEMAPX_EXPORT_TASK_BACKEND must be a TASKS alias, not {alias!r}.", "E301")
        ]
    if tasks_module() is None:
        if not required:
            return []
        return [
            error(
                "SITEMAPX_EXPORT_ON_CHANGE needs Django's Tasks framework, which is not "
                "installed.",
                "E301",
                hint='Use Django 6, or pip install "django-sitemapx[tasks]".',
            )
        ]
    if alias not in backend_aliases():
        if not required and alias == "default":
            return []  # exports split into tasks not used: the default alias may be absent
        return [
            error(
                f"SITEMAPX_EXPORT_TASK_BACKEND is {alias!r}, which is not an alias in TASKS.",
                "E301",
                hint=f"Known aliases: {', '.join(sorted(backend_aliases()))}.",
            )
        ]
    if required and backend_class_path(alias).endswith(".ImmediateBackend"):
        return [
            checks.Warning(
                f"The {alias!r} task backend is an ImmediateBackend: the export after a change "
                "runs inside the request that saved it.",
                hint="Configure a task backend with workers (django-tasks-db, RQ, ...).",
                id="django_sitemapx.W301",
            )
        ]
    return []
