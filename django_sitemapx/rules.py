"""Editors' rules: URL patterns that exclude URLs or set their values, compiled once per document.

A rule matches the path and query of a URL as the sitemap writes it (everything
after the host, percent-encoded), either by **prefix** (``/tag/`` matches
``/tag/`` and everything under it) or by **glob**, where ``*`` stands for any
run of characters, ``/`` and ``?`` included, and every other character stands
for itself (``/search?*``, ``/products/*/reviews/``). A rule may be limited to
one host and to one section.

No regular expression is compiled: a glob is cut at its ``*`` into literal
segments, matched in order with ``str.startswith``, ``str.find`` and
``str.endswith``. The leftmost place of each segment is the right one (a later
segment can only find more room after it), so one pass decides: linear in the
URL, whatever the pattern (see docs/contributing/security.md).

A document compiles the rules that apply to its host and section once
(:func:`compile_rules`); a URL is then tested against all of them at once with
one ``str.startswith`` on the tuple of the rules' literal heads, so the URLs no
rule can match (most of them) cost one C call each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .locations import URL_CONTROL_CHARS, location_uri

PREFIX = "prefix"
GLOB = "glob"
WILDCARD = "*"

# One rule's values as the hot path reads them: (exclude, lastmod, changefreq, priority),
# each None where the rule leaves it to the source (exclude: False).
RuleValues = tuple[bool, str | None, str | None, str | None]


def pattern_text(matching: str, pattern: str) -> str:
    """``pattern`` as rules store and match it: percent-encoded as the sitemap writes URLs.

    Raises ``ValueError`` with a message fit for a form when it cannot match a URL.
    """
    pattern = pattern.strip()
    if not pattern.startswith("/"):
        raise ValueError("A pattern starts with / (the path, without the host).")
    if URL_CONTROL_CHARS.search(pattern):
        raise ValueError("The pattern contains control characters.")
    if "#" in pattern:
        raise ValueError("A sitemap URL has no fragment: remove the # and what follows it.")
    if matching == PREFIX and WILDCARD in pattern:
        # "*" is a literal in a prefix: almost always a glob was meant.
        raise ValueError("A prefix matches literally: choose glob to use *.")
    try:
        return location_uri(pattern)
    except UnicodeError:
        raise ValueError("This is not a well-formed path.") from None


@dataclass(frozen=True)
class CompiledRule:
    """One rule, ready to test URLs' paths."""

    pk: int
    matching: str
    pattern: str
    values: RuleValues

    @property
    def head(self) -> str:
        """What every path the rule matches starts with."""
        return self.pattern.partition(WILDCARD)[0] if self.matching == GLOB else self.pattern

    def matches(self, path: str) -> bool:
        """Whether the rule matches ``path`` (the path and query of a written URL)."""
        if self.matching == PREFIX:
            return path.startswith(self.pattern)
        return glob_matches(self.pattern, path)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``path`` matches ``pattern``, where ``*`` is any run of characters."""
    head, *middle = pattern.split(WILDCARD)
    if not middle:
        return path == pattern
    tail = middle.pop()
    if len(path) < len(head) + len(tail) or not (path.startswith(head) and path.endswith(tail)):
        return False
    position, end = len(head), len(path) - len(tail)
    for segment in middle:
        found = path.find(segment, position, end)
        if found == -1:
            return False
        position = found + len(segment)
    return True


def _as_values(values: list[object]) -> RuleValues:
    exclude, lastmod, changefreq, priority = values
    assert isinstance(exclude, bool)
    return (exclude, lastmod, changefreq, priority)  # type: ignore[return-value]


def _paths(uris: Sequence[str]) -> list[str]:
    """The path and query of each URI; one slice each when they share the first's origin."""
    first = uris[0]
    start = first.find("/", first.find("://") + 3)
    if start == -1:
        return [path_of(uri) for uri in uris]
    origin = first[:start]
    return [uri[start:] if uri.startswith(origin) else path_of(uri) for uri in uris]


def path_of(uri: str) -> str:
    """The path and query of an absolute URI (what rules match)."""
    start = uri.find("/", uri.find("://") + 3)
    return uri[start:] if start != -1 else "/"


class RuleSet:
    """The rules that apply to one document, in the order they take precedence."""

    __slots__ = ("_by_length", "_heads", "rules")

    def __init__(self, rules: Iterable[CompiledRule]) -> None:
        self.rules = tuple(rules)
        self._heads = tuple({rule.head: None for rule in self.rules})
        by_length: dict[int, dict[str, list[tuple[int, CompiledRule]]]] = {}
        for rank, rule in enumerate(self.rules):
            by_length.setdefault(len(rule.head), {}).setdefault(rule.head, []).append((rank, rule))
        self._by_length = sorted(by_length.items())

    def __bool__(self) -> bool:
        return bool(self.rules)

    def may_match(self, uri: str) -> bool:
        """False when no rule can match ``uri``: one C call, the common case."""
        return path_of(uri).startswith(self._heads)

    def may_match_start(self, start: str) -> bool:
        """False when no rule can match a URI that starts with ``start`` (an absolute URI's
        beginning): every URI of a chunk held as columns shares its first literal."""
        path = (
            path_of(start)
            if "://" in start and start.find("/", start.find("://") + 3) != -1
            else ""
        )
        if not path:
            return True  # the literal ends inside the host: nothing to rule out
        return any(head.startswith(path) or path.startswith(head) for head in self._heads)

    def may_match_any(self, uris: Sequence[str]) -> bool:
        """False when no rule can match any of ``uris``: one C call per URI."""
        if not uris:
            return False
        heads = self._heads
        return any(path.startswith(heads) for path in _paths(uris))

    def matching(self, uri: str) -> list[CompiledRule]:
        """The rules matching ``uri``, first the one that takes precedence."""
        path = path_of(uri)
        if not path.startswith(self._heads):
            return []
        return [rule for rule in self.rules if rule.matches(path)]

    def values(self, uri: str) -> RuleValues | None:
        """What the rules decide for ``uri``: per value, the first matching rule setting it.

        None when no rule matches.
        """
        return self.decide([uri]).get(0)

    def decide(self, uris: Sequence[str]) -> dict[int, RuleValues]:
        """What the rules decide for each of ``uris`` a rule matches, by its index.

        Rule by rule over the whole chunk: the Python work per URL is one
        ``startswith`` on every rule's head at once, and per (URL, matching rule)
        one merge.
        """
        if not uris or not self.rules:
            return {}
        paths = _paths(uris)
        heads = self._heads
        candidates = [index for index, path in enumerate(paths) if path.startswith(heads)]
        if not candidates:
            return {}
        # A path's matching heads are among its prefixes of the heads' lengths:
        # one slice and one dict lookup per (URL, distinct head length).
        matched: dict[int, list[int]] = {}
        for length, by_head in self._by_length:
            for index in candidates:
                path = paths[index]
                ranked = by_head.get(path[:length])
                if ranked is None:
                    continue
                for rank, rule in ranked:
                    if rule.matching == PREFIX or glob_matches(rule.pattern, path):
                        matched.setdefault(index, []).append(rank)
        rules = self.rules
        decided: dict[int, list[object]] = {}
        for index, ranks in matched.items():
            ranks.sort()
            current: list[object] = list(rules[ranks[0]].values)
            for rank in ranks[1:]:
                values = rules[rank].values
                if values[0]:
                    current[0] = True
                for position in (1, 2, 3):
                    if current[position] is None:
                        current[position] = values[position]
            decided[index] = current
        return {index: _as_values(values) for index, values in decided.items()}

    def deciding(self, uri: str) -> tuple[CompiledRule | None, list[CompiledRule | None]]:
        """The rule excluding ``uri`` (or None), and the rule deciding each of its
        lastmod, change frequency and priority (or None): what the inspector shows."""
        found = self.matching(uri)
        excluding = next((rule for rule in found if rule.values[0]), None)
        per_value: list[CompiledRule | None] = []
        for index in (1, 2, 3):
            per_value.append(
                next((rule for rule in found if rule.values[index] is not None), None)
            )
        return excluding, per_value


EMPTY = RuleSet(())
