"""Every regular expression the package compiles is reviewed, and linear or bounded (#28).

A new ``re.compile``, ``re.<function>``, ``re_path`` or converter ``regex`` fails
the inventory test until it is added to ``REVIEWED`` with its rule (and to
docs/contributing/security.md). Each pattern is then run on hostile texts of two
lengths, 16 times apart: its cost may grow at most 64 times (linear: about 16,
quadratic: about 256). The URL resolver is measured the same way.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import Resolver404, resolve

import django_sitemapx
from django_sitemapx import urls
from tests.support.cost import GROWTH, LIMIT, growth

PACKAGE = Path(django_sitemapx.__file__).parent
_RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "sub", "subn", "split", "findall"}

# (module, the pattern as written) -> the rule it follows and why.
REVIEWED = {
    ("checks/discovery.py", "INDEXNOW_KEY_PATTERN"): (
        "bounded: {8,128} repeats of one class, fullmatch on a setting"
    ),
    ("urls.py", "IndexNowKeyConverter.regex"): (
        "bounded: [a-zA-Z0-9-]{8,128}, one class, at most 128 characters tried"
    ),
    ("extensions/values.py", "'[A-Z]{2}'"): "bounded: two characters",
    ("extensions/values.py", "'zh-cn|zh-tw|[a-z]{2,3}'"): "bounded: at most five characters",
    ("extensions/values.py", "f'[{NOT_XML_CHAR_RANGES}\\x7f-\\x9f]'"): (
        "linear: one character class, search tries each position once"
    ),
    (
        "extensions/values.py",
        '"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9_.~/=:;$&()+,!?*@\'-]*)?\\\\Z"',
    ): (
        "linear: anchored by match(); the host class excludes ':' and '/', which start "
        "the port and the path, so each character has one place"
    ),
    ("locations/__init__.py", "'[\\x00-\\x1f\\x7f]'"): "linear: one character class",
    ("locations/__init__.py", "'%(?![0-9A-Fa-f]{2})'"): (
        "linear: a literal and a two-character lookahead"
    ),
    ("locations/hosts.py", "'(?:[a-z0-9_-]+(?:\\\\.[a-z0-9_-]+)*|\\\\[[0-9a-f:.]+\\\\])'"): (
        "linear: labels are separated by '.', which no label holds, so each character "
        "has one place; fullmatch"
    ),
    ("locations/hosts.py", "'[^A-Za-z0-9.\\\\-]'"): "linear: one character class",
    ("locations/keys.py", "'%[0-9a-fA-F]{2}'"): "linear: three characters from each '%'",
    ("locations/reverse.py", "'<(?:(?P<converter>[^<>:]+):)?(?P<parameter>[^<>]+)>'"): (
        "linear: neither part holds '<', so a scan from one '<' ends at the next"
    ),
    ("locations/reverse.py", "converter.regex"): (
        "the project's path converter, fullmatch on the text its to_url() gave, as "
        "Django's reverse() runs it on the same text: no cost reverse() does not have"
    ),
    ("serving/cache.py", "'[A-Za-z0-9.\\\\-\\\\[\\\\]:]{1,100}'"): "bounded: 100 characters",
    ("serving/cache.py", "'[A-Za-z0-9._~/\\\\-]{1,120}'"): "bounded: 120 characters",
    ("urls.py", "'^sitemap-index-(?P<part>[0-9]+)\\\\.xml$'"): (
        "linear: digits end at the first other character"
    ),
    ("urls.py", "'^sitemap-index-(?P<part>[0-9]+)\\\\.xml\\\\.gz$'"): (
        "linear: digits end at the first other character"
    ),
    ("urls.py", "'^sitemap-(?P<section>[-a-zA-Z0-9_]+)-(?P<page>[^-/]+)\\\\.xml$'"): (
        "linear: the page holds no '-', so each split is tried against one run of "
        "characters between two '-' (a page of [^/]+ tried every split: quadratic)"
    ),
    ("urls.py", "'^sitemap-(?P<section>[-a-zA-Z0-9_]+)-(?P<page>[^-/]+)\\\\.xml\\\\.gz$'"): (
        "linear: as the .xml pattern"
    ),
    (
        "values.py",
        "'\\\\d{4}-\\\\d{2}-\\\\d{2}(T\\\\d{2}:\\\\d{2}:\\\\d{2}(\\\\.\\\\d+)?(Z|[+-]\\\\d{2}:\\\\d{2}))?'",
    ): "linear: one run of digits (the fraction), the rest fixed widths",
    ("values.py", "'[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*'"): (
        "linear: subtags are separated by '-', which no subtag holds; fullmatch"
    ),
    (
        "sources/pages.py",
        "'\\\\d{4}-\\\\d\\\\d-\\\\d\\\\d"
        "([ T]\\\\d\\\\d:\\\\d\\\\d(:\\\\d\\\\d(\\\\.\\\\d+)?)?)?([+-]\\\\d\\\\d:?\\\\d\\\\d|Z)?'",
    ): "linear: one run of digits (the fraction), the rest fixed widths; fullmatch",
    ("writer.py", "f'[{NOT_XML_CHAR_RANGES}]'"): "linear: one character class",
    ("contrib/wagtail/sources.py", "'[a-zA-Z0-9_/\\\\x1f-]*'"): (
        "linear: one character class, fullmatch"
    ),
}


def _regex_uses() -> Iterator[tuple[str, str]]:
    """(module, pattern as written) of every regex the package's source compiles or runs."""
    for file in sorted(PACKAGE.rglob("*.py")):
        module = file.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args:
                function = node.func
                is_re = (
                    isinstance(function, ast.Attribute)
                    and isinstance(function.value, ast.Name)
                    and function.value.id == "re"
                    and function.attr in _RE_FUNCTIONS | {"finditer"}
                )
                if is_re or (isinstance(function, ast.Name) and function.id == "re_path"):
                    yield module, ast.unparse(node.args[0])
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and any(
                        isinstance(target, ast.Name) and target.id == "regex"
                        for target in statement.targets
                    ):
                        yield module, f"{node.name}.regex"


def test_every_regular_expression_of_the_package_is_reviewed() -> None:
    found = sorted(set(_regex_uses()))
    assert found == sorted(REVIEWED), (
        "A regular expression was added, changed or removed: review it (linear on any "
        "input, or its input bounded before it runs), then update REVIEWED and "
        "docs/contributing/security.md."
    )


# Modules that import Wagtail's models at import time (they subclass its admin classes or
# register its hooks): importable only with Wagtail's apps installed. They hold no pattern.
NEEDS_WAGTAIL_APPS = {
    "django_sitemapx.contrib.wagtail.panels",
    "django_sitemapx.contrib.wagtail.wagtail_hooks",
}


def _compiled_patterns() -> dict[str, re.Pattern[str]]:
    """Every pattern the package holds compiled at import, and its URL patterns'."""
    found: dict[str, re.Pattern[str]] = {}
    for info in pkgutil.walk_packages([str(PACKAGE)], "django_sitemapx."):
        if ".migrations." in info.name or info.name in NEEDS_WAGTAIL_APPS:
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, re.Pattern):
                found[value.pattern] = value
    for pattern in urls.urlpatterns:
        regex = pattern.pattern.regex
        found[regex.pattern] = regex
    for _module, written in REVIEWED:
        try:
            literal = ast.literal_eval(written)
        except ValueError:
            continue  # a name or an f-string: found compiled above
        found.setdefault(literal, re.compile(literal))
    return found


PATTERNS = _compiled_patterns()
# Texts a backtracking matcher may stumble on: runs of one unit, after a prefix the
# anchored patterns need, then nothing or a character that ends every match.
PREFIXES = ("", "sitemap-", "sitemap-index-", "https://", "2024-01-01T00:00:00", "en")
UNITS = ("a", "Z", "0", "-", "_", ".", "/", ":", "%", "<", "[", "a-", "-a", "a.", "<a:", "%0")
ENDINGS = ("", "!")
SHORT = 128


def test_every_compiled_pattern_is_measured() -> None:
    # The names and f-strings of REVIEWED, compiled at import, are measured too.
    from django_sitemapx.conf import INDEXNOW_KEY_PATTERN
    from django_sitemapx.writer import NOT_XML_CHAR_RANGES

    for pattern in (INDEXNOW_KEY_PATTERN, f"[{NOT_XML_CHAR_RANGES}]"):
        assert pattern in PATTERNS
    assert f"[{NOT_XML_CHAR_RANGES}\x7f-\x9f]" in PATTERNS


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_each_pattern_costs_at_most_linear_on_hostile_text(pattern: str) -> None:
    compiled = PATTERNS[pattern]
    worst = 0.0
    for prefix in PREFIXES:
        for unit in UNITS:
            for ending in ENDINGS:
                short = prefix + unit * (SHORT // len(unit)) + ending
                long = prefix + unit * (SHORT * GROWTH // len(unit)) + ending
                for call in (compiled.search, compiled.fullmatch):
                    worst = max(worst, growth(call, short, long))
    assert worst < LIMIT, f"{pattern!r}: {GROWTH} times the text cost {worst:.0f} times more"


HOSTILE_PATHS = [
    ("/sitemap-", "-", ".xmlx"),
    ("/sitemap-", "-", ".xml.gzx"),
    ("/sitemap-", "-", ""),
    ("/sitemap-", "-", "/"),
    ("/sitemap-", "a-", ".xmlx"),
    ("/sitemap-", "-a", ".xml.gz."),
    ("/sitemap-index-", "0", ".xmlx"),
    ("/sitemap-a-", ".xml", "x"),
]


@pytest.mark.parametrize(("prefix", "unit", "ending"), HOSTILE_PATHS)
def test_resolving_a_near_match_path_costs_at_most_linear(
    prefix: str, unit: str, ending: str
) -> None:
    # 4,000 dashes cost 0.6-1.0 s with a page of [^/]+ (issue #28): every split was tried.
    def resolves(path: str) -> bool:
        try:
            resolve(path)
        except Resolver404:
            return False
        return True

    short = prefix + unit * (250 // len(unit)) + ending
    long = prefix + unit * (4000 // len(unit)) + ending
    assert growth(resolves, short, long) < LIMIT


@pytest.mark.django_db
@pytest.mark.parametrize(("prefix", "unit", "ending"), HOSTILE_PATHS)
def test_a_near_match_path_is_a_plain_404(prefix: str, unit: str, ending: str) -> None:
    response = Client(raise_request_exception=False).get(
        prefix + unit * (4000 // len(unit)) + ending
    )
    assert response.status_code == 404
