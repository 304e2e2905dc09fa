"""Reversing a named URL once per document and filling it per row with plain strings.

``reverse()`` per row costs tens of microseconds; a sitemap of a million rows
cannot afford it. The URL is reversed once with probe values, the probes are
located in the result, and the URL pattern's converters are looked up. Each
row's values then go through what ``reverse()`` does to them (``to_url()``,
the converter's regex, the same percent-encoding), so the path is the one
``reverse()`` gives, and a value ``reverse()`` would refuse skips the row.
For patterns whose converters cannot be read (``re_path``), every row is
reversed, which is correct but slow.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.urls import NoReverseMatch, Resolver404, get_script_prefix, resolve, reverse
from django.urls.converters import (
    IntConverter,
    PathConverter,
    SlugConverter,
    StringConverter,
    get_converters,
)
from django.utils import translation
from django.utils.http import RFC3986_SUBDELIMS

from ..conf import default_language
from ..exceptions import Skip, SkipReason

# What reverse() leaves unquoted in a path (django.urls.resolvers).
REVERSE_SAFE = RFC3986_SUBDELIMS + "/~:@"
# A <converter:name> or <name> parameter of a path() route. Django's own pattern
# with "<" kept out of both parts (no working route has one there): a run of "<"
# without ">" would otherwise be scanned to its end from each "<", quadratic.
_PARAMETER = re.compile(r"<(?:(?P<converter>[^<>:]+):)?(?P<parameter>[^<>]+)>")
# Values seen more than once (a category slug on every article) are encoded once.
_MEMO_SIZE = 4096

# Probe values that satisfy Django's built-in converters (str, slug, path; int; uuid).
_PROBE_STYLES: tuple[Callable[[int], str], ...] = (
    lambda i: f"sitemapxprobe{i}q",
    lambda i: f"86753090{i:02d}1",
    lambda i: f"5e1f0a2b-0000-4000-8000-0000000000{i:02d}",
)

PathFiller = Callable[[Sequence[Any]], str]


@dataclass(frozen=True)
class PlainTemplate:
    """The path ``CompiledUrl.fill`` writes, for values that need no work at all.

    The path is ``literals[0] + v0 + literals[1] + v1 + ...`` where ``vi`` is the
    value of ``fields[i]`` (in path order), provided each value is *plain* for
    its ``kinds[i]``: a non-empty string of characters that the converter
    accepts and ``reverse()`` leaves unquoted ("str", "slug", "path"), or a
    non-negative ``int`` ("int"). Other values go through ``fill``.
    """

    fields: list[str]
    literals: list[str]
    kinds: list[str]


@dataclass(frozen=True)
class CompiledUrl:
    """A URL name reversed once: the row fields it needs and how to fill them in.

    ``fill`` takes the values of ``fields`` (in that order) and gives the path,
    raising ``Skip`` for values the URL pattern refuses. ``plain`` is the fast
    template for plain values, or None if the pattern's converters are not all
    built in.
    """

    fields: list[str]
    fill: PathFiller
    plain: PlainTemplate | None


def compile_url(url_name: str, kwargs: Mapping[str, str]) -> CompiledUrl:
    """Reverse ``url_name`` once with probe values and compile how rows fill it.

    ``kwargs`` maps URL keyword arguments to field names. Raises
    ``NoReverseMatch`` if the name cannot be reversed with these arguments at all.
    """
    names = list(kwargs)
    fields = [kwargs[name] for name in names]
    if not names:
        path = reverse(url_name)
        return CompiledUrl([], lambda values: path, PlainTemplate([], [path], []))
    path, probes = _reverse_probes(url_name, names)
    converters = _converters(path, names)
    template = _template(path, probes)
    if converters is None or template is None:
        return CompiledUrl(fields, _reverse_each(url_name, names), None)
    fill = _filler(*template, [_encoder(converter) for converter in converters])
    return CompiledUrl(fields, fill, _plain_template(fields, converters, *template))


def _plain_template(
    fields: list[str], converters: list[Any], literals: list[str], order: list[int], tail: str
) -> PlainTemplate | None:
    kinds = [_KINDS.get(type(converters[index])) for index in order]
    if None in kinds or literals[0].startswith("//"):
        return None
    if kinds[0] == "path" and literals[0] in ("", "/"):
        return None  # a value starting with "/" would make the "//" reverse() rewrites
    return PlainTemplate(
        [fields[index] for index in order], [*literals, tail], [str(k) for k in kinds]
    )


# Django's own converters, by exact type: a subclass may change to_url() or regex.
_KINDS: dict[type, str] = {
    StringConverter: "str",
    SlugConverter: "slug",
    PathConverter: "path",
    IntConverter: "int",
}


def _reverse_probes(url_name: str, names: list[str]) -> tuple[str, list[str]]:
    for styles in itertools.product(_PROBE_STYLES, repeat=len(names)):
        probes = [style(i) for i, style in enumerate(styles)]
        try:
            return reverse(url_name, kwargs=dict(zip(names, probes, strict=True))), probes
        except NoReverseMatch:
            continue
    raise NoReverseMatch(f"{url_name!r} cannot be reversed with keyword arguments {names}")


Encoder = Callable[[Any], str]


def _converters(path: str, names: list[str]) -> list[Any] | None:
    prefix = get_script_prefix()
    path_info = "/" + path[len(prefix) :] if path.startswith(prefix) else path
    try:
        route = resolve(path_info).route or ""
    except Resolver404:
        return None
    available = get_converters()
    found = {
        m["parameter"]: available.get(m["converter"] or "str") for m in _PARAMETER.finditer(route)
    }
    if any(found.get(name) is None for name in names):
        return None
    return [found[name] for name in names]


def _encoder(converter: Any) -> Encoder:
    pattern = re.compile(converter.regex)
    memo: dict[Any, str] = {}

    def encode(value: Any) -> str:
        try:
            return memo[value]
        except (KeyError, TypeError):
            pass
        if value is None:
            raise Skip(SkipReason.MISSING_VALUE)
        try:
            text = str(converter.to_url(value))
        except ValueError:
            raise Skip(SkipReason.NO_REVERSE_MATCH) from None
        if not pattern.fullmatch(text):
            raise Skip(SkipReason.NO_REVERSE_MATCH)
        encoded = quote(text, safe=REVERSE_SAFE)
        if len(memo) < _MEMO_SIZE:
            memo[value] = encoded
        return encoded

    return encode


def _template(path: str, probes: list[str]) -> tuple[list[str], list[int], str] | None:
    positions = []
    for index, probe in enumerate(probes):
        start = path.find(probe)
        if start < 0 or path.find(probe, start + 1) >= 0:
            return None
        positions.append((start, index, len(probe)))
    positions.sort()
    literals: list[str] = []
    order: list[int] = []
    cursor = 0
    for start, index, length in positions:
        literals.append(path[cursor:start])
        order.append(index)
        cursor = start + length
    return literals, order, path[cursor:]


def _filler(
    literals: list[str], order: list[int], tail: str, encoders: list[Encoder]
) -> PathFiller:
    steps = [
        (literal, index, encoders[index]) for literal, index in zip(literals, order, strict=True)
    ]
    if len(steps) == 1:
        [(head, only, encode)] = steps

        def fill_one(values: Sequence[Any]) -> str:
            return _no_leading_double_slash(f"{head}{encode(values[only])}{tail}")

        return fill_one

    def fill(values: Sequence[Any]) -> str:
        parts = []
        for literal, index, encode in steps:
            parts.append(literal)
            parts.append(encode(values[index]))
        parts.append(tail)
        return _no_leading_double_slash("".join(parts))

    return fill


def _no_leading_double_slash(path: str) -> str:
    # reverse() does this so that the path cannot be read as a scheme-relative URL.
    return "/%2F" + path[2:] if path.startswith("//") else path


def _reverse_each(url_name: str, names: list[str]) -> PathFiller:
    def fill(values: Sequence[Any]) -> str:
        if any(value is None for value in values):
            raise Skip(SkipReason.MISSING_VALUE)
        try:
            return reverse(url_name, kwargs=dict(zip(names, values, strict=True)))
        except NoReverseMatch:
            raise Skip(SkipReason.NO_REVERSE_MATCH) from None

    return fill


def path_language(path: str, urlconf: str | None = None) -> str:
    """The language a path is in: its prefix under ``i18n_patterns``, else ``LANGUAGE_CODE``.

    Never the active language (an editor's, a client's): a path resolves, and a
    document is made, in the language its URL names.
    """
    if is_language_prefix_patterns_used(urlconf or settings.ROOT_URLCONF)[0]:
        language = translation.get_language_from_path(path)
        if language:
            return language
    return default_language()
