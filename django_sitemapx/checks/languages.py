"""E501-E503: the hosts of the language versions (a domain per country).

``SITEMAPX_LANGUAGE_HOSTS`` and a source's own ``language_hosts`` map a language
code to the host its versions are listed on; the alternates of every host's
documents then name the versions on the others (``sources.languages``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..conf import app_settings
from ..exceptions import InvalidURL
from ..locations.hosts import canonical_host
from ..locations.origins import origin_from_url, served_hosts, uses_sites_framework
from ..registry import all_registries
from ..sources import Source
from .messages import Messages, error


def check_language_hosts(**kwargs: Any) -> Messages:
    """``SITEMAPX_LANGUAGE_HOSTS``, and every source's hosts of its languages."""
    setting = app_settings.LANGUAGE_HOSTS
    errors = _check_mapping("SITEMAPX_LANGUAGE_HOSTS", setting)
    served = _served()
    if not errors and setting:
        errors += _check_served("SITEMAPX_LANGUAGE_HOSTS", setting, served)
    for registry in list(all_registries):
        for source in registry:
            errors += _check_source(source, served, setting_valid=not errors)
    return errors


def _served() -> set[str] | None:
    """The served hosts, canonical; None when only the database knows them (Sites)."""
    if app_settings.HOSTS is None and uses_sites_framework():
        return None
    hosts = app_settings.HOSTS
    if hosts is not None and (
        not isinstance(hosts, list | tuple) or not all(isinstance(name, str) for name in hosts)
    ):
        return None  # reported as E204
    return {canonical_host(name) for name in served_hosts()}


def _check_mapping(name: str, value: object, obj: Any = None) -> Messages:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [
            error(
                f"{name} must be None or a dict of language codes to host names, not {value!r}.",
                "E501",
                hint='For example {"de": "example.de", "fr": "example.fr"}.',
                obj=obj,
            )
        ]
    errors: Messages = []
    for code, host in value.items():
        if not (isinstance(code, str) and code and isinstance(host, str) and _is_host(host)):
            errors.append(
                error(
                    f"{name}: {code!r}: {host!r} is not a language code and a host name.",
                    "E501",
                    hint="A host is a name with any port, without scheme or path: example.de.",
                    obj=obj,
                )
            )
    return errors


def _is_host(host: str) -> bool:
    try:
        origin_from_url(f"https://{host}")
    except InvalidURL:
        return False
    return "/" not in host and bool(host.strip())


def _check_served(name: str, mapping: Mapping[str, str], served: set[str] | None) -> Messages:
    if served is None:
        return []
    return [
        error(
            f"{name}: the {code!r} versions are on {host!r}, which is not a host the project "
            "serves: they are neither listed nor anyone's alternate.",
            "E502",
            hint="Add the host to SITEMAPX_HOSTS, or map the language to a served host.",
        )
        for code, host in mapping.items()
        if canonical_host(host) not in served
    ]


def _check_source(source: Source, served: set[str] | None, setting_valid: bool) -> Messages:
    own = source.language_hosts
    errors: Messages = []
    if own is not None:
        label = f"Section {source.section!r}: language_hosts"
        errors = _check_mapping(label, own, obj=source)
        if errors:
            return errors
        errors += _check_served(label, own, served)
    elif not setting_valid:
        return []
    if not source.i18n:
        return errors
    try:
        hosts = source.get_language_hosts()
        codes = source.get_languages()
    except Exception:  # an invalid source: reported as E101
        return errors
    missing = [code for code in codes if code not in hosts]
    if hosts and missing:
        errors.append(
            error(
                f"Section {source.section!r} puts its languages on their own hosts, but "
                f"{', '.join(map(repr, missing))} has none: each host would list its own "
                "version of it, and their alternates would disagree.",
                "E503",
                hint="Give every language of the section a host (SITEMAPX_LANGUAGE_HOSTS "
                "or the section's language_hosts), or set language_hosts = {} on it.",
                obj=source,
            )
        )
    return errors
