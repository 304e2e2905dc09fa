"""Overrides in the served XML and the index: one query per chunk, every source."""

import datetime
from decimal import Decimal

import pytest
from django.db import DEFAULT_DB_ALIAS, connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_sitemapx import ItemSource, ModelSource, StaticSource, conf
from django_sitemapx.documents import listed_pages, page_path, render_index, render_page
from django_sitemapx.entries import Alternate, Entry, Extras, RenderedChunk
from django_sitemapx.locations import Origin
from django_sitemapx.models import Override, Rule
from django_sitemapx.overrides import (
    NOT_OVERRIDDEN,
    AffectedDocuments,
    affected_documents,
    chunk_overrides,
    fetch,
    fetch_rules,
    override_on,
    send_overrides_changed,
)
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.signals import overrides_changed
from example_project.articles.factories import ArticleFactory
from example_project.articles.models import Article
from tests.conftest import NS, locs, validate_sitemap

pytestmark = pytest.mark.django_db
ORIGIN = Origin("https", "example.com")


def _urls(root):  # type: ignore[no-untyped-def]
    return {
        url.findtext("sm:loc", namespaces=NS): {
            child.tag.split("}")[1]: child.text for child in url if not child.tag.endswith("loc")
        }
        for url in root.iterfind("sm:url", NS)
    }


def _render(source, page=1):  # type: ignore[no-untyped-def]
    stream = render_page(source, source.page(page), ORIGIN)
    return None if stream is None else validate_sitemap(b"".join(stream))


def test_overrides_replace_values_and_exclude_in_an_item_source(registry) -> None:  # type: ignore[no-untyped-def]
    source = registry.register(
        "pages", ItemSource, items=lambda: ["/a/", "/b/", "/c/"], priority=0.5, changefreq="daily"
    )
    Override.objects.create(location="https://example.com/a", priority=Decimal("0.9"))
    Override.objects.create(location="/b", exclude=True)
    Override.objects.create(
        location="/c/",
        changefreq="never",
        lastmod=datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC),
    )
    urls = _urls(_render(source))
    assert urls == {
        "https://example.com/a/": {"changefreq": "daily", "priority": "0.9"},
        "https://example.com/c/": {
            "lastmod": "2024-05-01T08:00:00+00:00",
            "changefreq": "never",
            "priority": "0.5",
        },
    }


@pytest.mark.parametrize("stored", ["nothing", "an override", "a rule"])
def test_a_rendered_chunk_stays_one_until_an_override_or_a_rule_exists(stored: str) -> None:
    extras = Extras(
        alternates=(
            Alternate("en", "https://example.com/a/"),
            Alternate("fr", "https://example.com/fr/a/"),
        )
    )
    entries = [
        Entry("https://example.com/a/", None, None, None, extras),
        Entry("https://example.com/fr/a/", None, None, None, extras),
    ]
    # Elements that are not the entries': what an override may change must not be kept.
    chunk = RenderedChunk(["<url>a</url>", "<url>b</url>"], lambda: list(entries), frozenset())
    if stored == "an override":
        Override.objects.create(location="/fr/a/", exclude=True)
    elif stored == "a rule":
        Rule.objects.create(pattern="/fr/", exclude=True)
    apply = chunk_overrides("pages", "example.com")
    assert apply is not None
    applied = apply(chunk)
    if stored == "nothing":
        assert applied is chunk
    else:
        # The French URL left out, and no alternate of the English one either.
        assert not isinstance(applied, RenderedChunk)
        ((loc, *_values, left),) = applied
        assert loc == "https://example.com/a/"
        assert left is not None and [href for _code, href in left.alternates] == [loc]


def test_a_page_whose_urls_are_all_excluded_is_not_served(registry) -> None:  # type: ignore[no-untyped-def]
    source = registry.register("pages", ItemSource, items=lambda: ["/a/"])
    Override.objects.create(location="/a/", exclude=True)
    assert render_page(source, source.page(1), ORIGIN) is None


@pytest.mark.parametrize(("preload_limit", "queries"), [(5_000, 1), (1, 1 + 3)])
def test_model_source_gets_overrides_with_at_most_one_query_per_chunk(
    registry,
    settings,
    monkeypatch,
    preload_limit: int,
    queries: int,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr(conf, "CHUNK_SIZE", 10)
    monkeypatch.setattr("django_sitemapx.overrides.PRELOAD_LIMIT", preload_limit)
    source = registry.register(
        Article,
        ModelSource,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        priority=0.4,
    )
    articles = ArticleFactory.create_batch(25)
    first, second, last = articles[0], articles[11], articles[24]
    Override.objects.create(location=first.get_absolute_url(), priority=Decimal("1.0"))
    Override.objects.create(location=second.get_absolute_url(), exclude=True)
    Override.objects.create(location=last.get_absolute_url(), changefreq="never")
    # Overrides of one host: this document's wins over the one of every host; another
    # host's does nothing here. The queries stay the same.
    Override.objects.create(
        location=first.get_absolute_url(), host="example.com", priority=Decimal("0.7")
    )
    Override.objects.create(
        location=articles[5].get_absolute_url(), host="b.example", exclude=True
    )
    with CaptureQueriesContext(connection) as captured:
        root = _render(source)
    # Three chunks of ten rows or fewer. With few overrides the first query reads
    # them all; with more than PRELOAD_LIMIT, each chunk then reads its own.
    override_queries = [q for q in captured if Override._meta.db_table in q["sql"]]
    assert len(override_queries) == queries
    urls = _urls(root)
    assert len(urls) == 24
    assert urls[f"https://example.com{first.get_absolute_url()}"]["priority"] == "0.7"
    assert f"https://example.com{second.get_absolute_url()}" not in urls
    assert urls[f"https://example.com{last.get_absolute_url()}"]["changefreq"] == "never"
    assert urls[f"https://example.com{articles[5].get_absolute_url()}"]["priority"] == "0.4"


ON_B = Origin("https", "b.example")


def _render_on(source, origin):  # type: ignore[no-untyped-def]
    stream = render_page(source, source.page(1), origin)
    return None if stream is None else _urls(validate_sitemap(b"".join(stream)))


@pytest.mark.parametrize("preload_limit", [5_000, 1])
def test_an_override_of_one_host_wins_there_and_does_nothing_elsewhere(
    registry,
    monkeypatch,
    preload_limit: int,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr("django_sitemapx.overrides.PRELOAD_LIMIT", preload_limit)
    source = registry.register("pages", ItemSource, items=lambda: ["/", "/a/", "/b/", "/c/"])
    # Two sites' home pages: a priority set on one is not the other's.
    Override.objects.create(location="/", host="example.com", priority=Decimal("1.0"))
    Override.objects.create(location="/a/", priority=Decimal("0.9"))
    Override.objects.create(location="/a/", host="b.example", priority=Decimal("0.2"))
    Override.objects.create(location="/b/", host="b.example", exclude=True)
    Override.objects.create(location="/c/", host="example.com", exclude=True)
    with CaptureQueriesContext(connection) as captured:
        on_a = _render_on(source, ORIGIN)
    assert len([q for q in captured if Override._meta.db_table in q["sql"]]) == (
        1 if preload_limit == 5_000 else 2  # the preload, then the chunk's own
    )
    assert on_a == {
        "https://example.com/": {"priority": "1.0"},
        "https://example.com/a/": {"priority": "0.9"},
        "https://example.com/b/": {},
    }
    assert _render_on(source, ON_B) == {
        "https://b.example/": {},
        "https://b.example/a/": {"priority": "0.2"},
        "https://b.example/c/": {},
    }
    # A port that is not the scheme's default is part of the host.
    assert _render_on(source, Origin("https", "b.example:8443")) == {
        "https://b.example:8443/": {},
        "https://b.example:8443/a/": {"priority": "0.9"},
        "https://b.example:8443/b/": {},
        "https://b.example:8443/c/": {},
    }


def test_only_overrides_of_another_host_still_key_no_url_here(registry, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    source = registry.register("pages", ItemSource, items=lambda: ["/a/"])
    Override.objects.create(location="/a/", host="b.example", exclude=True)
    calls: list[str] = []
    real = __import__("django_sitemapx.overrides", fromlist=["uri_key"]).uri_key
    monkeypatch.setattr(
        "django_sitemapx.overrides.uri_key", lambda uri: calls.append(uri) or real(uri)
    )
    assert _render_on(source, ORIGIN) == {"https://example.com/a/": {}}
    assert calls == []  # no override applies on this host: no key per URL


class _ServedUnderAnotherName(ItemSource):
    """A source whose site is site.example, served on other hosts too (a Wagtail site's)."""

    def fallback_host(self) -> str | None:
        return "site.example" if self.origin and self.origin.host != "site.example" else None


@pytest.mark.parametrize("preload_limit", [5_000, 1])
def test_a_fallback_hosts_overrides_and_rules_apply_under_the_hosts_own(
    registry,
    monkeypatch,
    preload_limit: int,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr("django_sitemapx.overrides.PRELOAD_LIMIT", preload_limit)
    source = registry.register(
        "pages", _ServedUnderAnotherName, items=lambda: ["/", "/a", "/b", "/c", "/d", "/e"]
    )
    Override.objects.create(location="/a", priority=Decimal("0.1"))
    Override.objects.create(location="/a", host="site.example", priority=Decimal("0.5"))
    Override.objects.create(location="/b", host="site.example", exclude=True)
    Override.objects.create(location="/b", host="example.com", priority=Decimal("0.9"))
    Override.objects.create(location="/c", priority=Decimal("0.3"))
    Override.objects.create(location="/e", host="b.example", exclude=True)
    Rule.objects.create(pattern="/d", host="site.example", changefreq="yearly")
    bound = source.for_origin(ORIGIN)
    # The host's own, else its site's, else every host's; another host's never.
    assert _render_on(bound, ORIGIN) == {
        "https://example.com/": {},
        "https://example.com/a": {"priority": "0.5"},
        "https://example.com/b": {"priority": "0.9"},
        "https://example.com/c": {"priority": "0.3"},
        "https://example.com/d": {"changefreq": "yearly"},
        "https://example.com/e": {},
    }
    # Read one URL at a time (the inspector), the same.
    assert override_on("/b", "example.com", "site.example").priority == Decimal("0.9")
    assert override_on("/a", "example.com", "site.example").priority == Decimal("0.5")
    assert override_on("/c", "example.com", "site.example").priority == Decimal("0.3")
    assert override_on("/a", "example.com").priority == Decimal("0.1")
    assert fetch(["/a", "/b", "/c"], "example.com", "site.example") == {
        "/a": (False, None, None, "0.5"),
        "/b": (False, None, None, "0.9"),
        "/c": (False, None, None, "0.3"),
    }
    assert fetch_rules("pages", "example.com", "site.example").values("https://example.com/d")
    assert fetch_rules("pages", "example.com").values("https://example.com/d") is None


@pytest.mark.parametrize(("named_host", "digests"), [("b.example", 3), ("example.com", 6)])
def test_chunk_by_chunk_a_url_costs_a_second_digest_only_where_a_host_has_overrides(
    registry,
    monkeypatch,
    named_host: str,
    digests: int,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr("django_sitemapx.overrides.PRELOAD_LIMIT", 1)
    source = registry.register("pages", ItemSource, items=lambda: ["/a/", "/b/", "/c/"])
    Override.objects.create(location="/a/", priority=Decimal("0.9"))
    Override.objects.create(location="/b/", host=named_host, priority=Decimal("0.2"))
    hashed: list[tuple[str, str]] = []
    real = __import__("django_sitemapx.models", fromlist=["location_hash"]).location_hash

    def counting(location: str, host: str = "") -> str:
        hashed.append((location, host))
        return real(location, host)

    monkeypatch.setattr("django_sitemapx.models.location_hash", counting)
    with CaptureQueriesContext(connection) as captured:
        urls = _render_on(source, ORIGIN)
    # The preload (which asks whether an override names this host) and the chunk's own.
    assert len([q for q in captured if Override._meta.db_table in q["sql"]]) == 2
    assert len(hashed) == digests
    assert urls["https://example.com/a/"] == {"priority": "0.9"}
    assert urls["https://example.com/b/"] == (
        {"priority": "0.2"} if named_host == "example.com" else {}
    )


def test_the_index_is_raised_by_the_overrides_of_its_host_or_none(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", StaticSource, url_names=["home", "about"])
    Override.objects.create(
        location="/about/",
        host="b.example",
        lastmod=datetime.datetime(2024, 6, 1, tzinfo=datetime.UTC),
        section="pages",
        page=1,
    )
    assert listed_pages(registry, ORIGIN)[0].summary.lastmod is None
    assert listed_pages(registry, ON_B)[0].summary.lastmod == "2024-06-01T00:00:00+00:00"
    # Unbound (every host): every override.
    assert listed_pages(registry)[0].summary.lastmod == "2024-06-01T00:00:00+00:00"


@override_settings(SITEMAPX_OVERRIDES=False)
def test_overrides_can_be_switched_off(registry) -> None:  # type: ignore[no-untyped-def]
    source = registry.register("pages", ItemSource, items=lambda: ["/a/"])
    Override.objects.create(location="/a/", exclude=True)
    assert locs(_render(source)) == ["https://example.com/a/"]


def test_forced_lastmod_reaches_the_index(registry, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", StaticSource, url_names=["home", "about"])
    Override.objects.create(
        location="/about/",
        lastmod=datetime.datetime(2024, 6, 1, tzinfo=datetime.UTC),
        section="pages",
        page=1,
    )
    with django_assert_num_queries(2):  # the overrides' lastmods and the rules'
        entries = listed_pages(registry)
    assert entries[0].summary.lastmod == "2024-06-01T00:00:00+00:00"
    root = validate_sitemap(b"".join(render_index(entries, ORIGIN, page_path)))
    assert root.findtext("sm:sitemap/sm:lastmod", namespaces=NS) == "2024-06-01T00:00:00+00:00"


def test_an_earlier_forced_lastmod_does_not_lower_the_index(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register(
        "pages",
        ItemSource,
        items=lambda: [{"location": "/a/", "lastmod": datetime.date(2025, 1, 1)}],
    )
    Override.objects.create(
        location="/a/",
        lastmod=datetime.datetime(2024, 6, 1, tzinfo=datetime.UTC),
        section="pages",
        page=1,
    )
    assert listed_pages(registry)[0].summary.lastmod == "2025-01-01"


def test_forced_lastmod_of_an_excluded_or_unplaced_override_is_ignored(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", StaticSource, url_names=["home", "about"])
    when = timezone.now() - datetime.timedelta(days=1)
    Override.objects.create(
        location="/about/", lastmod=when, section="pages", page=1, exclude=True
    )
    Override.objects.create(location="/", lastmod=when)
    assert listed_pages(registry)[0].summary.lastmod is None


def test_the_export_writes_the_overridden_documents(registry, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from django.core.management import call_command

    registry.register("pages", ItemSource, items=lambda: ["/a/", "/b/"], priority=0.5)
    Override.objects.create(location="/a", priority=Decimal("0.1"), section="pages", page=1)
    Override.objects.create(location="/b", exclude=True)
    # Of another host: not in this export; of its host: wins over the one of every host.
    Override.objects.create(location="/a", host="b.example", exclude=True)
    Override.objects.create(location="/b", host="example.com", changefreq="daily")
    call_command(
        "sitemap_export", output_dir=str(tmp_path), base_url="https://example.com", verbosity=0
    )
    urls = _urls(validate_sitemap((tmp_path / "sitemap-pages-1.xml").read_bytes()))
    assert urls == {
        "https://example.com/a/": {"priority": "0.1"},
        "https://example.com/b/": {"changefreq": "daily", "priority": "0.5"},
    }


# -- what a change of overrides affects ----------------------------------------


def test_affected_documents() -> None:
    affected = affected_documents([("/a", [("s", 1), None]), ("/b", [("s", 3), ("s", 1)])])
    assert affected.pages == frozenset({("s", 1), ("s", 3)})
    assert affected.locations == frozenset({"/a", "/b"})
    assert not affected.everything
    assert affected_documents([("/c", [("s", None)])]).everything
    assert affected_documents([("/c", [("", 2)])]).everything


def test_send_overrides_changed_sends_what_the_changes_affect() -> None:
    received: list[dict[str, object]] = []

    def receiver(sender: object, **kwargs: object) -> None:
        received.append({"sender": sender, **kwargs})

    overrides_changed.connect(receiver)
    try:
        affected = send_overrides_changed(Override, [("/a", [("s", 1)])])
        nothing = send_overrides_changed(Override, [])
        on_host = send_overrides_changed(
            Override,
            [(("b.example", "/a"), [("s", 2)]), ("/a", [("s", 1)])],
            {("b.example", "/a"): NOT_OVERRIDDEN, "/a": (True, None, "", None)},
        )
    finally:
        overrides_changed.disconnect(receiver)
    assert affected == AffectedDocuments(frozenset({"/a"}), frozenset({("s", 1)}), False)
    assert nothing == AffectedDocuments(frozenset(), frozenset(), False)
    assert received[0] == {
        "sender": Override,
        "signal": overrides_changed,
        "locations": frozenset({"/a"}),
        "pages": frozenset({("s", 1)}),
        "everything": False,
        "affected": affected,
        "before": {},  # what the overrides showed before the change: not given
        "host_locations": frozenset({("", "/a")}),  # of every host
        "host_before": {},
    }
    # Nothing for no change; the hosts of overrides of one host ("" for every host).
    assert len(received) == 2
    assert on_host.locations == frozenset({"/a"})
    assert received[1]["host_locations"] == frozenset({("b.example", "/a"), ("", "/a")})
    # ``before`` keeps its meaning (the host-less overrides); ``host_before`` has them all.
    assert received[1]["before"] == {"/a": (True, None, "", None)}
    assert received[1]["host_before"] == {
        ("b.example", "/a"): NOT_OVERRIDDEN,
        ("", "/a"): (True, None, "", None),
    }


@pytest.mark.django_db
def test_a_forced_lastmod_out_of_range_is_ignored_not_a_500(registry: SitemapRegistry) -> None:
    from django.test import Client

    from django_sitemapx.models import Override
    from tests.conftest import content, validate_sitemap

    registry.register("pages", items=lambda: ["/a/", "/b/"])
    late = datetime.datetime(9999, 12, 31, 23, 0, tzinfo=datetime.UTC)  # past the admin's check
    Override.objects.create(location="/a", lastmod=late, section="pages", page=1)
    client = Client(HTTP_HOST="example.com", raise_request_exception=False)
    for path in ("/sitemap.xml", "/sitemap-pages-1.xml"):
        response = client.get(path)
        assert response.status_code == 200
        body = content(response)
        assert b"9999" not in body
        validate_sitemap(body)


@pytest.mark.django_db(transaction=True)
def test_before_migrate_documents_are_served_without_overrides_and_say_why(
    client, monkeypatch, caplog
) -> None:  # type: ignore[no-untyped-def]
    # A project that installed the app but has not run migrate yet.
    from django_sitemapx import models, overrides

    ArticleFactory()
    monkeypatch.setattr(models, "_FOUND_TABLES", set())
    with connection.schema_editor() as editor:
        editor.delete_model(Override)
    try:
        with caplog.at_level("ERROR", logger="django_sitemapx"):
            index = client.get("/sitemap.xml")
            page = client.get("/sitemap-article-1.xml")
        assert (index.status_code, page.status_code) == (200, 200)
        validate_sitemap(b"".join(index.streaming_content) if index.streaming else index.content)
        assert len(locs(validate_sitemap(b"".join(page.streaming_content)))) == 1
        assert "run `python manage.py migrate`" in caplog.text
        assert not overrides.table_ready()
    finally:
        with connection.schema_editor() as editor:
            editor.create_model(Override)
    assert overrides.table_ready()
    # Looked up once, then remembered.
    assert (DEFAULT_DB_ALIAS, Override._meta.db_table) in models._FOUND_TABLES
