"""Checks of the robots.txt and IndexNow settings: E201-E207, W201-W203."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.http.request import validate_host
from django.urls import NoReverseMatch, reverse

from ..compat import backend_aliases, backend_class_path, tasks_module
from ..conf import INDEXNOW_KEY_PATTERN, app_settings
from ..documents import URL_NAMESPACE
from ..exceptions import InvalidURL
from ..locations.origins import (
    files_root_from_url,
    origin_from_url,
    served_hosts,
    uses_sites_framework,
)
from .messages import Messages, error


def check_discovery(**kwargs: Any) -> Messages:
    """The robots.txt and IndexNow settings."""
    errors = [*_check_robots(), *_check_hosts_setting()]
    key = app_settings.INDEXNOW_KEY
    if key is not None and (not isinstance(key, str) or not _KEY.fullmatch(key)):
        errors.append(
            error(
                f"SITEMAPX_INDEXNOW_KEY must be None or 8 to 128 characters of a-z, A-Z, "
                f"0-9 and '-', not {key!r}.",
                "E201",
                hint="IndexNow's rule (indexnow.org). For example: python -c "
                '"import uuid; print(uuid.uuid4().hex)"',
            )
        )
    errors += _check_indexnow_values()
    if not errors and key:
        errors += _check_indexnow_running(key)
    return errors


_KEY = re.compile(INDEXNOW_KEY_PATTERN)
_URL = URLValidator(schemes=["http", "https"])


def _check_robots() -> Messages:
    errors: Messages = []
    if not isinstance(app_settings.ROBOTS_RULES, str):
        errors.append(
            error(
                f"SITEMAPX_ROBOTS_RULES must be a string, not {app_settings.ROBOTS_RULES!r}.",
                "E206",
            )
        )
    files_base_url = app_settings.FILES_BASE_URL
    if files_base_url is not None:
        problem = None
        if not isinstance(files_base_url, str):
            problem = "it is not a string"
        else:
            try:
                files_root_from_url(files_base_url)
            except InvalidURL as exc:
                problem = str(exc)
        if problem is not None:
            errors.append(
                error(
                    f"SITEMAPX_FILES_BASE_URL {files_base_url!r} is unusable: {problem}",
                    "E207",
                    hint="The URL the exported files are served at, e.g. "
                    "https://cdn.example.net/sitemaps.",
                )
            )
    return errors


def _check_hosts_setting() -> Messages:
    hosts = app_settings.HOSTS
    if hosts is None:
        return []
    if not isinstance(hosts, list | tuple) or not all(isinstance(h, str) for h in hosts):
        return [error(f"SITEMAPX_HOSTS must be None or a list of hosts, not {hosts!r}.", "E204")]
    errors: Messages = []
    for host in hosts:
        try:
            origin_from_url(f"https://{host}")
            valid = "/" not in host
        except InvalidURL:
            valid = False
        if not valid:
            errors.append(error(f"SITEMAPX_HOSTS: {host!r} is not a host name.", "E204"))
        elif settings.ALLOWED_HOSTS and not validate_host(host.lower(), settings.ALLOWED_HOSTS):
            errors.append(
                error(
                    f"SITEMAPX_HOSTS: ALLOWED_HOSTS does not accept {host!r}, so the site "
                    "does not serve it.",
                    "E204",
                )
            )
    return errors


def _check_indexnow_values() -> Messages:
    errors: Messages = []
    endpoint = app_settings.INDEXNOW_ENDPOINT
    try:
        _URL(endpoint)
    except (ValidationError, TypeError):
        errors.append(
            error(f"SITEMAPX_INDEXNOW_ENDPOINT must be an http(s) URL, not {endpoint!r}.", "E202")
        )
    alias = app_settings.INDEXNOW_TASK_BACKEND
    if alias is not None:
        if not isinstance(alias, str):
            errors.append(
                error(
                    f"SITEMAPX_INDEXNOW_TASK_BACKEND must be None or a TASKS alias, "
                    f"not {alias!r}.",
                    "E203",
                )
            )
        elif app_settings.INDEXNOW_KEY and tasks_module() is None:
            errors.append(
                error(
                    "SITEMAPX_INDEXNOW_TASK_BACKEND needs Django's Tasks framework, which "
                    "is not installed.",
                    "E203",
                    hint='Use Django 6, or pip install "django-sitemapx[tasks]" (the '
                    "django-tasks backport), or set it to None and run "
                    "manage.py sitemap_indexnow from cron.",
                )
            )
        elif app_settings.INDEXNOW_KEY and alias not in backend_aliases():
            errors.append(
                error(
                    f"SITEMAPX_INDEXNOW_TASK_BACKEND is {alias!r}, which is not an alias "
                    "in TASKS.",
                    "E203",
                    hint=f"Known aliases: {', '.join(sorted(backend_aliases()))}.",
                )
            )
    return errors


def _check_indexnow_running(key: str) -> Messages:
    warnings: Messages = []
    if not uses_sites_framework() and not served_hosts():
        warnings.append(
            checks.Warning(
                "IndexNow is on, but no host is known to submit URLs for: ALLOWED_HOSTS "
                "names no public host.",
                hint="Set SITEMAPX_HOSTS to the hosts the site serves.",
                id="django_sitemapx.W201",
            )
        )
    alias = app_settings.INDEXNOW_TASK_BACKEND
    if alias is not None and backend_class_path(alias).endswith(".ImmediateBackend"):
        warnings.append(
            checks.Warning(
                f"The {alias!r} task backend is an ImmediateBackend: IndexNow submissions "
                "(with their retries) run inside the request that saved the change.",
                hint="Configure a task backend with workers (django-tasks-db, RQ, ...), or set "
                "SITEMAPX_INDEXNOW_TASK_BACKEND = None and run manage.py sitemap_indexnow "
                "from cron.",
                id="django_sitemapx.W202",
            )
        )
    try:
        path = reverse(f"{URL_NAMESPACE}:indexnow-key", kwargs={"key": key})
    except NoReverseMatch:
        path = None
    if path != f"/{key}.txt":
        where = "is not routed" if path is None else f"is served at {path}"
        warnings.append(
            checks.Warning(
                f"The IndexNow key file {where}; search engines look for it at /{key}.txt "
                "and accept only URLs below the folder it is in.",
                hint='Include django_sitemapx.urls at the site root (path("", include(...))), '
                f"or serve /{key}.txt yourself.",
                id="django_sitemapx.W203",
            )
        )
    return warnings
