"""The 33 sections of Django's own sitemap tests (``tests/sitemaps_tests``), re-described.

Each entry of :data:`SECTIONS` is a section name, the contrib ``Sitemap`` it serves
and the settings it is served under, with the behaviour the Django suite gives it:
static values, callable values, lastmods on some items only, paging past 50,000,
``protocol``, ``get_latest_lastmod()``, a ``GenericSitemap``, the six i18n forms.
Written for this project (the classes are ours); ``test_contrib_suite`` serves
every one through contrib's view and through ours and compares the URLs.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.utils import timezone

from tests.contribapp.models import Thing, TranslatedThing

TODAY = datetime.date.today()
MARCH_13 = datetime.datetime(2013, 3, 13, 10, 0, 0)
APRIL_20 = datetime.datetime(2013, 4, 20, 5, 0, 0)


class OneUrl(Sitemap):  # type: ignore[type-arg]
    """One item at a fixed location, every value static."""

    location = "/location/"
    changefreq = "never"
    priority = 0.5
    lastmod: Any = TODAY

    def items(self) -> list[object]:
        return [object()]


class Paged(Sitemap):  # type: ignore[type-arg]
    """One more item than a page holds: two pages."""

    lastmod = TODAY

    def items(self) -> list[object]:
        return [object() for _ in range(Sitemap.limit + 1)]

    def location(self, item: object) -> str:
        return "/paged/"


class NoItems(Sitemap):  # type: ignore[type-arg]
    location = "/location/"
    changefreq = "never"
    priority = 0.5


class March13(OneUrl):
    lastmod = MARCH_13


class April20(OneUrl):
    lastmod = APRIL_20


class March13Date(OneUrl):
    lastmod = datetime.date(2013, 3, 13)


class March13Minus5(OneUrl):
    lastmod = MARCH_13.replace(tzinfo=timezone.get_fixed_timezone(-300))


class SecureOneUrl(OneUrl):
    protocol = "https"


def _two_things(*lastmods: datetime.datetime | None) -> list[Thing]:
    things = []
    for value in lastmods:
        thing = Thing()
        thing.lastmod = value
        things.append(thing)
    return things


class MixedAttribute(Sitemap):  # type: ignore[type-arg]
    """Items carrying a ``lastmod`` attribute, which a static-lastmod sitemap ignores."""

    location = "/location/"
    changefreq = "never"
    priority = 0.5

    def items(self) -> list[Thing]:
        return _two_things(MARCH_13, None)


class CallablePartial(Sitemap):  # type: ignore[type-arg]
    location = "/location/"

    def items(self) -> list[Thing]:
        return _two_things(MARCH_13, None)

    def lastmod(self, item: Thing) -> datetime.datetime | None:
        return item.lastmod


class CallableFull(CallablePartial):
    def items(self) -> list[Thing]:
        return _two_things(MARCH_13, datetime.datetime(2014, 3, 13, 10, 0, 0))


class CallableEmpty(CallablePartial):
    def items(self) -> list[Thing]:
        return []


class LatestNone(Sitemap):  # type: ignore[type-arg]
    location = "/location/"
    changefreq = "never"
    priority = 0.5

    def items(self) -> list[object]:
        return [object()]

    def lastmod(self, item: object) -> datetime.datetime:
        return MARCH_13

    def get_latest_lastmod(self) -> None:
        return None


class LatestMarch13(OneUrl):
    def get_latest_lastmod(self) -> datetime.datetime:
        return MARCH_13


class Translated(Sitemap):  # type: ignore[type-arg]
    changefreq = "never"
    priority = 0.5
    i18n = True

    def items(self) -> Any:
        return TranslatedThing.objects.order_by("pk")


class TranslatedAlternates(Translated):
    alternates = True


class TranslatedTwoLanguages(TranslatedAlternates):
    languages = ["en", "es"]


class TranslatedXDefault(TranslatedAlternates):
    x_default = True


class _PortugueseOnly:
    def get_languages_for_item(self, item: TranslatedThing) -> list[str]:
        if item.name == "Only for PT":
            return ["pt"]
        return super().get_languages_for_item(item)  # type: ignore[misc,no-any-return]


class TranslatedByItem(_PortugueseOnly, Translated):
    pass


class TranslatedByItemAlternates(_PortugueseOnly, TranslatedAlternates):
    x_default = True


def generic() -> GenericSitemap[Thing]:
    return GenericSitemap({"queryset": Thing.objects.order_by("pk")})


def generic_dated() -> GenericSitemap[Thing]:
    return GenericSitemap({"queryset": Thing.objects.order_by("pk"), "date_field": "lastmod"})


EN_PT = {"LANGUAGES": [("en", "English"), ("pt", "Portuguese")], "LANGUAGE_CODE": "en"}
EN_PT_ES = {
    "LANGUAGES": [("en", "English"), ("pt", "Portuguese"), ("es", "Spanish")],
    "LANGUAGE_CODE": "en",
}


@dataclass(frozen=True)
class Case:
    """One section of the Django suite: its URLconf group, name, sitemap and settings."""

    group: str
    section: str
    sitemap: Any
    settings: dict[str, Any] = field(default_factory=dict)
    translated: bool = False

    @property
    def label(self) -> str:
        return f"{self.group}:{self.section}"


SECTIONS: list[Case] = [
    Case("simple", "simple", OneUrl),
    Case("simple-not-callable", "simple", OneUrl()),
    Case("simple-paged", "simple", Paged),
    Case("simple-i18n", "i18n", Translated, EN_PT, translated=True),
    Case("alternates", "i18n-alternates", TranslatedAlternates, EN_PT, translated=True),
    Case("limited", "i18n-limited", TranslatedTwoLanguages, EN_PT_ES, translated=True),
    Case("x-default", "i18n-xdefault", TranslatedXDefault, EN_PT, translated=True),
    Case("item-by-lang", "i18n-item-by-lang", TranslatedByItem, EN_PT, translated=True),
    Case(
        "item-by-lang-alternates",
        "i18n-item-by-lang-alternates",
        TranslatedByItemAlternates,
        EN_PT,
        translated=True,
    ),
    Case("empty", "empty", NoItems),
    Case("lastmod", "fixed-lastmod", March13),
    Case("lastmod-mixed", "fixed-lastmod-mixed", MixedAttribute),
    Case("date", "date-sitemap", March13Date),
    Case("tz", "tz-sitemap", March13Minus5),
    Case("mixed-ascending", "no-lastmod", NoItems),
    Case("mixed-ascending", "lastmod", March13),
    Case("mixed-descending", "lastmod", March13),
    Case("mixed-descending", "no-lastmod", NoItems),
    Case("ascending", "date", March13Date),
    Case("ascending", "datetime", March13),
    Case("ascending", "datetime-newer", April20),
    Case("descending", "datetime-newer", April20),
    Case("descending", "datetime", March13),
    Case("descending", "date", March13Date),
    Case("generic", "generic", generic()),
    Case("generic-lastmod", "generic", generic_dated()),
    Case("get-latest-lastmod-none", "get-latest-lastmod-none", LatestNone),
    Case("get-latest-lastmod", "get-latest-lastmod", LatestMarch13),
    Case("latest-lastmod-timezone", "latest-lastmod-timezone", March13Minus5),
    Case("callable-partial", "callable-lastmod", CallablePartial),
    Case("callable-full", "callable-lastmod", CallableFull),
    Case("callable-no-items", "callable-lastmod", CallableEmpty),
    Case("secure", "simple", SecureOneUrl),
]
