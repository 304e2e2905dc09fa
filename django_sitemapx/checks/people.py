"""E601-E602: what serves the sitemap to people and audits it (the stylesheet, the audit task)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from ..compat import backend_aliases, tasks_module
from ..conf import XML_STYLESHEET_MAX_LENGTH, app_settings
from ..writer import has_illegal_xml_chars
from .messages import Messages, error


def check_people(**kwargs: Any) -> Messages:
    """``SITEMAPX_XML_STYLESHEET`` and ``SITEMAPX_AUDIT_TASK_BACKEND``."""
    return [*_check_stylesheet(), *_check_audit_task()]


def _check_stylesheet() -> Messages:
    value = app_settings.XML_STYLESHEET
    if value is None:
        return []
    if (
        not isinstance(value, str)
        or not value.strip()
        or value != value.strip()
        or any(char.isspace() for char in value)
        or has_illegal_xml_chars(value)
        or len(value) > XML_STYLESHEET_MAX_LENGTH
    ):
        return [
            error(
                f"SITEMAPX_XML_STYLESHEET must be None or the URL, path or static file name "
                f"of a CSS stylesheet (no space, at most {XML_STYLESHEET_MAX_LENGTH} "
                f"characters), not {value!r}.",
                "E601",
                hint='For example "django_sitemapx/sitemap.css", the stylesheet shipped.',
            )
        ]
    return []


def _check_audit_task() -> Messages:
    alias = app_settings.AUDIT_TASK_BACKEND
    if not isinstance(alias, str) or not alias:
        return [
            error(f"SITEMAPX_AUDIT_TASK_BACKEND must be a TASKS alias, not {alias!r}.", "E602")
        ]
    # The default alias is looked for only when the setting names one: a project
    # that never runs the audit task needs no TASKS at all.
    if hasattr(settings, "SITEMAPX_AUDIT_TASK_BACKEND") and tasks_module() is not None:
        aliases = backend_aliases()
        if alias not in aliases:
            return [
                error(
                    f"SITEMAPX_AUDIT_TASK_BACKEND is {alias!r}, which is not an alias in TASKS.",
                    "E602",
                    hint=f"Known aliases: {', '.join(sorted(aliases))}.",
                )
            ]
    return []
