"""``WagtailPageSource`` against real Wagtail: sites, privacy, page types, locales, events.

Needs Wagtail (the ``test-cms`` extra) and ``tests.wagtailsite.settings``:
``SITEMAPX_TEST_LEGS=wagtail scripts/test``. Elsewhere these tests are skipped,
saying why; in that leg a skip is a failure.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from io import StringIO
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.wagtailsite.leg import skip_unless_in_leg

skip_unless_in_leg()

from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client, RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from wagtail.contrib.sitemaps import views as wagtail_views
from wagtail.models import Locale, Page, PageViewRestriction, Site

from django_sitemapx import conf, indexnow
from django_sitemapx.compat import tasks_module
from django_sitemapx.contrib.wagtail import WagtailPageSource
from django_sitemapx.contrib.wagtail.sources import _Locator
from django_sitemapx.models import PendingUrl
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.signals import sitemap_invalidated
from tests.conftest import NS, content, lastmod_day, validate_sitemap
from tests.wagtailsite.models import ArticlePage, EventPage

pytestmark = pytest.mark.django_db
XHTML = "{http://www.w3.org/1999/xhtml}link"


@pytest.fixture
def indexnow_on(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """IndexNow on, each submission tried once: these tests read what was queued.

    The tests' endpoint (port 9) refuses at once; the 3 retries would sleep 14 s a test.
    """
    settings.SITEMAPX_INDEXNOW_KEY = "0123456789abcdef"
    monkeypatch.setattr(indexnow, "RETRIES", 0)


def urls(data: bytes) -> list[tuple[str, str]]:
    """Each URL's location and the day of its lastmod (as Wagtail's view writes it), validated."""
    root = validate_sitemap(data)
    return [
        (
            str(element.findtext("sm:loc", namespaces=NS)),
            lastmod_day(element.findtext("sm:lastmod", namespaces=NS)),
        )
        for element in root.iterfind("sm:url", NS)
    ]


def document(host: str, number: int = 1, section: str = "wagtail") -> bytes:
    response = Client().get(f"/sitemap-{section}-{number}.xml", HTTP_HOST=host)
    assert response.status_code == 200, response
    return content(response)


def index(host: str) -> bytes:
    response = Client().get("/sitemap.xml", HTTP_HOST=host)
    assert response.status_code == 200, response
    return content(response)


def every_loc(host: str) -> set[str]:
    """The locations of every page of the index of ``host``."""
    root = validate_sitemap(index(host))
    found: set[str] = set()
    for loc in root.iterfind("sm:sitemap/sm:loc", NS):
        path = str(loc.text).split(host, 1)[1]
        response = Client().get(path, HTTP_HOST=host)
        found |= {found for found, _ in urls(content(response))}
    return found


def rename_site(hostname: str, new: str, capture_on_commit_callbacks: Any) -> Site:
    """The site of ``hostname`` saved as ``new``, its commit callbacks run."""
    site = Site.objects.get(hostname=hostname)
    site.hostname = new
    with capture_on_commit_callbacks(execute=True):
        site.save()
    return site


def theirs(host: str) -> list[tuple[str, str]]:
    """What ``wagtail.contrib.sitemaps`` serves on ``host``."""
    response = wagtail_views.sitemap(RequestFactory().get("/sitemap.xml", HTTP_HOST=host))
    response.render()
    return urls(response.content)


def publish(page: Page) -> Page:
    page.save_revision().publish()
    page.refresh_from_db()
    return page


@pytest.fixture(autouse=True)
def _fresh_site_root_paths() -> Iterator[None]:
    # Wagtail keeps its sites' root paths in the default cache.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def wagtail(registry: SitemapRegistry) -> WagtailPageSource:
    # EventPage lists up to two URLs (its schedule).
    source = registry.register("wagtail", WagtailPageSource, max_urls_per_page=2)
    assert isinstance(source, WagtailPageSource)
    return source


@pytest.fixture
def two_sites() -> dict[str, Page]:
    """a.example (the default site) and b.example, each with pages of both types."""
    root = Page.get_first_root_node()
    Site.objects.all().delete()
    pages: dict[str, Page] = {}
    for host, default in (("a.example", True), ("b.example", False)):
        home = root.add_child(instance=Page(title=host, slug=host.replace(".", "-")))
        publish(home)
        pages[host] = home
        Site.objects.create(hostname=host, port=80, root_page=home, is_default_site=default)
    a, b = pages["a.example"], pages["b.example"]
    pages["news"] = publish(a.add_child(instance=ArticlePage(title="News", slug="news")))
    pages["story"] = publish(
        pages["news"].add_child(instance=ArticlePage(title="Story", slug="story"))
    )
    pages["event"] = publish(a.add_child(instance=EventPage(title="Fair", slug="fair")))
    pages["hidden"] = publish(
        a.add_child(instance=EventPage(title="Hidden", slug="hidden", hidden=True))
    )
    pages["scheduled"] = publish(
        a.add_child(instance=EventPage(title="Gala", slug="gala", has_schedule=True))
    )
    pages["shop"] = publish(b.add_child(instance=ArticlePage(title="Shop", slug="shop")))
    # A Unicode slug: percent-encoded as Wagtail's reverse() encodes it.
    pages["café"] = publish(pages["shop"].add_child(instance=ArticlePage(title="C", slug="café")))
    return pages


# -- what each site lists -------------------------------------------------------------------


@pytest.mark.parametrize("host", ["a.example", "b.example"])
def test_each_site_lists_its_own_pages_as_wagtails_sitemap_does(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], host: str
) -> None:
    ours = urls(document(host))
    assert ours == theirs(host)
    assert all(loc.startswith(f"http://{host}/pages/") for loc, _ in ours)


def test_urls_are_wagtails_own_and_overrides_of_get_sitemap_urls_are_honoured(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    data = document("a.example")
    locs = [loc for loc, _ in urls(data)]
    expected = [
        two_sites[name].get_full_url()
        for name in ("a.example", "news", "story", "event", "scheduled")
    ]
    assert locs == [*expected[:4], expected[4], expected[4] + "schedule/"]
    assert two_sites["hidden"].get_full_url() not in locs  # its override lists no URL
    root = validate_sitemap(data)
    priorities = {
        element.findtext("sm:loc", namespaces=NS): element.findtext("sm:priority", namespaces=NS)
        for element in root.iterfind("sm:url", NS)
    }
    assert priorities[expected[3]] == "0.8"  # from the type's own get_sitemap_urls()
    assert priorities[expected[1]] is None


def test_each_value_a_type_gives_is_formatted_or_counted_url_by_url(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    from collections import Counter
    from decimal import Decimal

    from django_sitemapx.entries import Skipped
    from django_sitemapx.locations import LocationBuilder, Origin

    a = two_sites["a.example"]
    events = [
        publish(a.add_child(instance=EventPage(title=f"E{number}", slug=f"e{number}")))
        for number in range(8)
    ]
    # Valid values come again (formatted once a document); invalid ones are counted
    # each time they come, whatever their type.
    given = [0.8, "0.5", 7, 0.8, Decimal("sNaN"), True, "0.5", 7]
    priorities = {page.pk: value for page, value in zip(events, given, strict=True)}

    def get_sitemap_urls(self: EventPage, request: Any = None) -> list[dict[str, Any]]:
        return [{"location": self.get_full_url(request), "priority": priorities.get(self.pk, 1)}]

    monkeypatch.setattr(EventPage, "get_sitemap_urls", get_sitemap_urls)
    bound = wagtail.for_origin(Origin("http", "a.example"))
    found = {}
    skips: Counter[str] = Counter()
    for chunk in bound.page(1).entries(LocationBuilder(bound.origin)):  # type: ignore[union-attr]
        if isinstance(chunk, Skipped):
            skips[chunk.reason] += chunk.total
        else:
            found.update({entry[0]: entry[3] for entry in chunk})
    assert [found[page.get_full_url()] for page in events] == [
        "0.8", "0.5", None, "0.8", None, None, "0.5", None
    ]  # fmt: skip
    assert skips == {"invalid_priority": 4}


def test_lastmod_is_last_published_at(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    moment = datetime.datetime(2024, 3, 1, 12, tzinfo=datetime.UTC)
    Page.objects.filter(pk=two_sites["news"].pk).update(last_published_at=moment)
    found = dict(urls(document("a.example")))
    assert found[two_sites["news"].get_full_url()] == "2024-03-01"


def test_a_page_published_near_midnight_is_on_wagtails_day(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    # 23:30 UTC is 00:30 the next day in Paris (the tests' TIME_ZONE): Wagtail's
    # view writes that local day, we write the instant with its offset.
    moment = datetime.datetime(2024, 3, 1, 23, 30, tzinfo=datetime.UTC)
    Page.objects.filter(pk=two_sites["news"].pk).update(last_published_at=moment)
    loc = two_sites["news"].get_full_url()
    assert dict(theirs("a.example"))[loc] == "2024-03-02"
    assert dict(urls(document("a.example")))[loc] == "2024-03-02"


@override_settings(WAGTAIL_APPEND_SLASH=False)
def test_no_trailing_slash_without_wagtail_append_slash(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    locs = [loc for loc, _ in urls(document("a.example"))]
    assert "http://a.example/pages/news/story" in locs
    assert "http://a.example/pages" in locs  # as Wagtail strips it: not the bare "/"


def test_a_site_on_its_own_port_is_served_there(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    Site.objects.filter(hostname="b.example").update(port=8000)
    response = Client().get("/sitemap-wagtail-1.xml", HTTP_HOST="b.example:8000", SERVER_PORT=8000)
    locs = [loc for loc, _ in urls(content(response))]
    assert locs == [
        "http://b.example:8000/pages/",
        "http://b.example:8000/pages/shop/",
        "http://b.example:8000/pages/shop/caf%C3%A9/",
    ]


def test_no_specific_query_per_page_for_types_that_do_not_override(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    def queries() -> int:
        cache.clear()
        document("a.example")  # counts the pages once
        with CaptureQueriesContext(connection) as captured:
            document("a.example")
        return len(captured)

    before = queries()
    news = two_sites["news"]
    for number in range(20):
        publish(news.add_child(instance=ArticlePage(title=f"A{number}", slug=f"a{number}")))
    assert queries() == before


def test_a_types_own_pages_are_read_in_one_query_per_document(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = two_sites["a.example"]
    for number in range(6):
        publish(a.add_child(instance=EventPage(title=f"E{number}", slug=f"e{number}")))
    document("a.example")  # counts the pages once
    cache.clear()
    whole = urls(document("a.example"))
    monkeypatch.setattr(conf, "CHUNK_SIZE", 2)  # the rows read two by two
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        assert urls(document("a.example")) == whole
    table = EventPage._meta.db_table
    events = [query for query in captured if f'FROM "{table}"' in query["sql"]]
    assert len(events) == 1
    assert "http://a.example/pages/e5/" in {loc for loc, _ in whole}


def test_a_document_reads_the_view_restrictions_and_its_site_once(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    a = two_sites["a.example"]
    publish(a.add_child(instance=EventPage(title="Event", slug="event")))  # asks its site
    PageViewRestriction.objects.create(page=two_sites["story"], restriction_type="login")
    document("a.example")  # counts the pages once
    cache.clear()
    Site.get_site_root_paths()  # Wagtail's own, kept in the cache
    with CaptureQueriesContext(connection) as captured:
        data = document("a.example")
    restrictions = [q for q in captured if 'FROM "wagtailcore_pageviewrestriction"' in q["sql"]]
    assert len(restrictions) == 1
    # The registry asks whether Wagtail serves the host, then binds the source to its
    # site; the Event page's get_sitemap_urls() is given that site, not a third lookup.
    sites = [q for q in captured if q["sql"].startswith('SELECT "wagtailcore_site"."id"')]
    assert len(sites) == 2
    locs = [loc for loc, _ in urls(data)]
    assert "http://a.example/pages/event/" in locs
    assert two_sites["story"].get_full_url() not in locs


def test_chunks_of_a_few_entries_write_the_same_document(
    wagtail: WagtailPageSource, translated: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django_sitemapx.contrib.wagtail import sources
    from django_sitemapx.locations import LocationBuilder, Origin

    document("a.example")  # counts the pages once
    cache.clear()
    whole = document("a.example")
    monkeypatch.setattr(sources, "ENTRIES_PER_CHUNK", 2)
    bound = wagtail.for_origin(Origin("http", "a.example"))
    page = bound.page(1)
    assert page is not None
    chunks = [
        item for item in page.entries(LocationBuilder(bound.origin)) if isinstance(item, list)
    ]
    assert len(chunks) > 1 and max(map(len, chunks)) == 2
    cache.clear()
    assert document("a.example") == whole


# -- privacy --------------------------------------------------------------------------------


def test_drafts_expired_and_restricted_pages_are_left_out(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    a = two_sites["a.example"]
    draft = a.add_child(instance=ArticlePage(title="Draft", slug="draft", live=False))
    past = timezone.now() - datetime.timedelta(days=1)
    # Live, past its expiry: the scheduler has not unpublished it yet.
    stale = publish(a.add_child(instance=ArticlePage(title="Old", slug="old")))
    Page.objects.filter(pk=stale.pk).update(expire_at=past)
    PageViewRestriction.objects.create(
        page=two_sites["news"], restriction_type=PageViewRestriction.PASSWORD, password="x"
    )
    locs = [loc for loc, _ in urls(document("a.example"))]
    for page in (draft, stale, two_sites["news"], two_sites["story"]):
        assert page.get_full_url() not in locs
    assert two_sites["event"].get_full_url() in locs
    # Wagtail's own sitemap leaves out the restricted subtree and the draft too.
    assert set(locs) <= {loc for loc, _ in theirs("a.example")}


def test_a_nested_sites_pages_are_its_own(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    Site.objects.create(hostname="example.com", port=80, root_page=two_sites["news"])
    cache.clear()
    a = [loc for loc, _ in urls(document("a.example"))]
    nested = [loc for loc, _ in urls(document("example.com"))]
    assert nested == ["http://example.com/pages/", "http://example.com/pages/story/"]
    assert not any("news" in loc for loc in a)


# -- locales --------------------------------------------------------------------------------


@pytest.fixture
def translated(two_sites: dict[str, Page], settings: Any) -> dict[str, Page]:
    settings.WAGTAIL_I18N_ENABLED = True
    settings.ROOT_URLCONF = "tests.wagtailsite.i18n_urls"
    french = Locale.objects.create(language_code="fr")
    pages = dict(two_sites)
    for name in ("a.example", "news", "story"):
        page = two_sites[name]
        copy = page.copy_for_translation(french, copy_parents=True)
        pages[f"{name}:fr"] = publish(copy)
    cache.clear()
    return pages


def test_each_translation_is_a_url_with_reciprocal_alternates_and_x_default(
    wagtail: WagtailPageSource, translated: dict[str, Page]
) -> None:
    root = validate_sitemap(document("a.example"))
    links: dict[str, dict[str, str]] = {}
    for element in root.iterfind("sm:url", NS):
        loc = str(element.findtext("sm:loc", namespaces=NS))
        links[loc] = {link.get("hreflang"): link.get("href") for link in element.iter(XHTML)}
    english, french = translated["story"].get_full_url(), translated["story:fr"].get_full_url()
    assert english != french and french.startswith("http://a.example/fr/")
    expected = {"en": english, "fr": french, "x-default": english}
    assert links[english] == expected
    assert links[french] == expected
    # A page with no translation has no alternates.
    assert links[translated["event"].get_full_url()] == {}


def test_every_locale_tree_of_a_site_is_listed(
    wagtail: WagtailPageSource, translated: dict[str, Page]
) -> None:
    locs = {loc for loc, _ in urls(document("a.example"))}
    for name in ("a.example:fr", "news:fr", "story:fr"):
        assert translated[name].get_full_url() in locs


def _links(data: bytes) -> dict[str, dict[str, str]]:
    """Each URL's alternates (hreflang: href), the document validated."""
    root = validate_sitemap(data)
    return {
        str(element.findtext("sm:loc", namespaces=NS)): {
            str(link.get("hreflang")): str(link.get("href")) for link in element.iter(XHTML)
        }
        for element in root.iterfind("sm:url", NS)
    }


def read_versions(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Have documents read their rows' versions ``how``.

    With each row, in SQL (PostgreSQL), either joined to the site's pages of each
    locale ("joined", a page holding a large share of its site) or looked up by the
    page's keys ("by keys"); or per chunk ("per chunk", elsewhere).
    """
    from django_sitemapx.contrib.wagtail import sources

    monkeypatch.setattr(sources, "WHOLE_TREE_SHARE", 0.0 if how == "joined" else 2.0)
    if how == "per chunk":
        monkeypatch.setattr(_Locator, "versions_in_sql", lambda self, using: False)


@pytest.fixture(params=["joined", "by keys", "per chunk"])
def versions_read(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Alternates built from each row's versions read with it (PostgreSQL), or per chunk."""
    read_versions(monkeypatch, request.param)
    return str(request.param)


def test_alternates_leave_out_versions_that_are_not_listed(
    wagtail: WagtailPageSource, translated: dict[str, Page], versions_read: str
) -> None:
    french = Locale.objects.get(language_code="fr")
    # An expired, a restricted and a draft French version, and a Unicode slug's.
    home_fr = translated["a.example:fr"]
    for name in ("event", "scheduled", "hidden"):
        translated[f"{name}:fr"] = publish(translated[name].copy_for_translation(french))
    Page.objects.filter(pk=translated["event:fr"].pk).update(
        expire_at=timezone.now() - datetime.timedelta(hours=1)
    )
    PageViewRestriction.objects.create(
        page=translated["news:fr"], restriction_type=PageViewRestriction.PASSWORD, password="x"
    )
    cafe = publish(
        translated["news"].add_child(instance=ArticlePage(title="Café", slug="café-crème"))
    )
    cafe_fr = publish(cafe.copy_for_translation(french))
    draft = translated["a.example"].add_child(instance=ArticlePage(title="D", slug="draft"))
    draft.copy_for_translation(french)  # never published
    links = _links(document("a.example"))
    english, french_url = cafe.get_full_url(), cafe_fr.get_full_url()
    assert english.endswith("/pages/news/caf%C3%A9-cr%C3%A8me/")
    # The French café lies under the restricted French news page: not listed.
    assert french_url not in links and links[english] == {}
    assert links[translated["news"].get_full_url()] == {}
    assert links[translated["story"].get_full_url()] == {}
    assert links[draft.get_full_url()] == {}
    # The expired French event is not an alternate of the English one.
    assert translated["event:fr"].get_full_url() not in links
    home = translated["a.example"].get_full_url()
    expected = {"en": home, "fr": home_fr.get_full_url(), "x-default": home}
    assert links[home] == links[home_fr.get_full_url()] == expected
    assert home_fr.get_full_url() == "http://a.example/fr/pages/"


def test_alternates_are_the_same_read_in_sql_or_per_chunk(
    wagtail: WagtailPageSource,
    translated: dict[str, Page],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    french = Locale.objects.get(language_code="fr")
    cafe = publish(translated["news"].add_child(instance=ArticlePage(title="C", slug="café")))
    publish(cafe.copy_for_translation(french))
    settings.WAGTAIL_APPEND_SLASH = False
    monkeypatch.setattr(conf, "CHUNK_SIZE", 3)  # chunks split pages from their versions
    document("a.example")  # counts the pages
    cache.clear()
    read_versions(monkeypatch, "joined")
    with CaptureQueriesContext(connection) as in_sql:
        ours = document("a.example")
    read_versions(monkeypatch, "by keys")
    cache.clear()
    assert document("a.example") == ours
    read_versions(monkeypatch, "per chunk")
    cache.clear()
    with CaptureQueriesContext(connection) as per_chunk:
        assert document("a.example") == ours
    links = _links(ours)
    french_cafe = "http://a.example/fr/pages/news/caf%C3%A9"
    assert links[french_cafe] == {
        "en": "http://a.example/pages/news/caf%C3%A9",
        "fr": french_cafe,
        "x-default": "http://a.example/pages/news/caf%C3%A9",
    }
    # In SQL (PostgreSQL's only: elsewhere both read per chunk), no query per chunk for
    # the alternates.
    if connection.vendor == "postgresql":
        assert len(in_sql) < len(per_chunk)
    else:
        assert len(in_sql) == len(per_chunk)


def test_alternates_are_the_same_read_per_locale_or_aggregated(
    wagtail: WagtailPageSource, translated: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django_sitemapx.contrib.wagtail import sources

    german = Locale.objects.create(language_code="de")
    publish(translated["story"].copy_for_translation(german, copy_parents=True))
    document("a.example")  # counts the pages
    cache.clear()
    read_versions(monkeypatch, "joined")
    per_locale = document("a.example")
    read_versions(monkeypatch, "by keys")
    cache.clear()
    assert document("a.example") == per_locale
    # More locales than columns: the versions are aggregated with STRING_AGG.
    monkeypatch.setattr(sources, "MAX_LOCALE_COLUMNS", 2)
    cache.clear()
    assert document("a.example") == per_locale
    monkeypatch.setattr(_Locator, "versions_in_sql", lambda self, using: False)
    cache.clear()
    assert document("a.example") == per_locale
    links = _links(per_locale)
    assert set(links[translated["story"].get_full_url()]) == {"en", "fr", "de", "x-default"}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="versions read in SQL")
def test_a_page_holding_a_fifth_of_its_site_joins_its_locales_pages(
    registry: SitemapRegistry, translated: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django_sitemapx.locations import Origin

    # Nine rows on a.example, on pages of at most four (a row may list two URLs).
    source = registry.register("wagtail", WagtailPageSource, limit=8, max_urls_per_page=2)
    assert isinstance(source, WagtailPageSource)
    index("a.example")  # counts the pages
    states = source.for_origin(Origin("http", "a.example")).page_table().states()
    listed = sum(state.rows for state in states)
    forms = set()
    for state in states:
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            data = document("a.example", state.number)
        (query,) = [query["sql"] for query in captured if "ORDER BY r.c0" in query["sql"]]
        joined = "LEFT JOIN" in query and "ANY(ARRAY" not in query
        assert joined == (state.rows * 5 >= listed), (state, listed)
        forms.add(joined)
        # Either form gives the same bytes.
        with monkeypatch.context() as patched:
            read_versions(patched, "by keys" if joined else "joined")
            cache.clear()
            assert document("a.example", state.number) == data
    assert forms == {True, False}


def test_a_version_with_a_control_character_has_no_link(
    wagtail: WagtailPageSource, translated: dict[str, Page], versions_read: str
) -> None:
    story_fr = translated["story:fr"]
    # What no admin form lets through: the separator of the versions read in SQL.
    Page.objects.filter(pk=story_fr.pk).update(url_path=story_fr.url_path + "\x1fx/")
    links = _links(document("a.example"))
    assert links[translated["story"].get_full_url()] == {}


def test_a_rows_uri_read_from_its_versions_is_what_locate_gives(
    wagtail: WagtailPageSource, translated: dict[str, Page]
) -> None:
    from django_sitemapx.contrib.wagtail.sources import Root, SiteTree
    from django_sitemapx.entries import SkipCounter
    from django_sitemapx.locations import LocationBuilder, Origin

    builder = LocationBuilder(Origin("http", "a.example"))
    english = Root("00010001", "/home/", "en", "/")
    french = Root("00010002", "/home-fr/", "fr", "/fr/")
    # Roots whose url_paths root_of() cannot tell apart: the URI is left to locate().
    same = Root("00010002", "/home/", "fr", "/fr/")
    for roots, own in (((french, english), True), ((english, same), False)):
        locator = _Locator(wagtail, SiteTree(1, "a.example", 80, roots, ()), builder)
        assert locator.own_in_links is own
        for slug in ("story", "café"):
            versions = "\x1f".join(f"{root.path}{root.url_path}{slug}/" for root in roots)
            for root in roots:
                url_path = f"{root.url_path}{slug}/"
                loc, links = locator.located_links(url_path, versions)
                assert (loc is not None) is (own and slug == "story")
                assert loc in (None, locator.locate(url_path, SkipCounter()))
                assert links == locator.links(versions)
                assert links is not None and len(links) == (3 if own else 2)  # x-default: en


@pytest.mark.skipif(connection.vendor != "postgresql", reason="versions read in SQL")
@pytest.mark.parametrize("x_default", [True, False])
@pytest.mark.parametrize("append_slash", [True, False])
def test_rows_written_from_templates_are_the_elements_of_their_entries(
    registry: SitemapRegistry,
    translated: dict[str, Page],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    x_default: bool,
    append_slash: bool,
) -> None:
    from django_sitemapx.contrib.wagtail import sources
    from django_sitemapx.entries import RenderedChunk
    from django_sitemapx.locations import LocationBuilder, Origin
    from django_sitemapx.writer import url_elements

    french = Locale.objects.get(language_code="fr")
    german = Locale.objects.create(language_code="de")
    publish(translated["story"].copy_for_translation(german, copy_parents=True))
    cafe = publish(translated["news"].add_child(instance=ArticlePage(title="C", slug="café")))
    publish(cafe.copy_for_translation(french))
    publish(translated["scheduled"].copy_for_translation(french))
    # Pages in two of the three languages, and one in one.
    for slug in ("duo", "pair"):
        duo = publish(translated["news"].add_child(instance=ArticlePage(title=slug, slug=slug)))
        publish(duo.copy_for_translation(french))
    alone = publish(translated["news"].add_child(instance=ArticlePage(title="A", slug="alone")))
    settings.WAGTAIL_APPEND_SLASH = append_slash
    source = registry.register(
        "wagtail", WagtailPageSource, max_urls_per_page=2, x_default_locale=x_default
    )
    assert isinstance(source, WagtailPageSource)
    monkeypatch.setattr(conf, "CHUNK_SIZE", 3)  # pages apart from their versions
    made: list[str | None] = []
    element = sources._Shape.element

    def counted(shape: Any, *args: Any) -> str | None:
        made.append(element(shape, *args))
        return made[-1]

    monkeypatch.setattr(sources._Shape, "element", counted)
    index("a.example")  # counts the pages
    bound = source.for_origin(Origin("http", "a.example"))
    page = bound.page(1)
    assert page is not None and isinstance(page.entries, sources.PlainChunkEntries)
    builder = LocationBuilder(bound.origin)
    rendered = [c for c in page.entries.chunks(builder) if isinstance(c, RenderedChunk)]
    entries = [c for c in page.entries(builder) if isinstance(c, list)]
    assert rendered and {chunk.declared for chunk in rendered} == {frozenset({"xhtml"})}
    # What the writer would write of the entries, element for element and chunk by chunk.
    written = [url_elements(chunk, declared={"xhtml"}) for chunk in entries]
    ours = [element for chunk in rendered for element in chunk.elements]
    assert ours == [element for chunk in written for element in chunk]
    for chunk in rendered:
        assert chunk.elements == url_elements(chunk.entries(), declared=chunk.declared)
        assert chunk.legal
    # Rows of three plain versions were written from a template (two versions: without
    # a call), not as entries; none is without WAGTAIL_APPEND_SLASH (``href()`` strips
    # the slash the versions end with).
    assert bool([made for made in made if made]) is append_slash
    locs = [loc for loc, _day in urls(document("a.example"))]
    assert alone.get_full_url().rstrip("/") in {loc.rstrip("/") for loc in locs}
    assert len(locs) == len(ours)


# -- page types making their own URLs -------------------------------------------------------


def test_types_keeping_wagtails_url_parts_reverse_nothing_per_page(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    from wagtail.models import pages

    a = two_sites["a.example"]
    for number in range(5):
        publish(a.add_child(instance=EventPage(title=f"E{number}", slug=f"e{number}")))
    # A Unicode slug: Wagtail's own get_url_parts(), which percent-encodes it.
    cafe = publish(a.add_child(instance=EventPage(title="Café", slug="café")))
    calls: list[Any] = []
    reverse = pages.reverse

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return reverse(*args, **kwargs)

    monkeypatch.setattr(pages, "reverse", counted)
    ours = urls(document("a.example"))
    assert len(calls) == 1  # the café only
    monkeypatch.undo()
    assert ours == theirs("a.example")
    assert ("http://a.example/pages/caf%C3%A9/", ours[-1][1]) in ours
    assert cafe.get_full_url() == "http://a.example/pages/caf%C3%A9/"


def test_a_type_overriding_get_url_parts_is_asked_for_them(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    def get_url_parts(self: Any, request: Any = None) -> Any:
        site_id, root_url, path = Page.get_url_parts(self, request)
        return site_id, root_url, f"/events{path}"

    monkeypatch.setattr(EventPage, "get_url_parts", get_url_parts)
    locs = [loc for loc, _ in urls(document("a.example"))]
    assert "http://a.example/events/pages/fair/" in locs
    assert "http://a.example/events/pages/gala/schedule/" in locs
    assert "http://a.example/pages/fair/" not in locs


def test_get_sitemap_urls_is_given_one_request_for_the_document(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    own = EventPage.get_sitemap_urls

    def get_sitemap_urls(self: Any, request: Any = None) -> Any:
        seen.append(request)
        return own(self, request)

    monkeypatch.setattr(EventPage, "get_sitemap_urls", get_sitemap_urls)
    document("a.example")
    assert len(seen) == 3 and len({id(request) for request in seen}) == 1
    request = seen[0]
    # Wagtail's caches on the request, filled once: no Site lookup per page.
    assert request._wagtail_site.hostname == "a.example"
    assert request._wagtail_cached_site_root_paths
    assert request.get_host() == "a.example"


def test_pages_asked_for_their_urls_are_the_instances_django_loads(
    two_sites: dict[str, Page],
) -> None:
    from django_sitemapx.contrib.wagtail.sources import _pages

    keys = [two_sites[name].pk for name in ("event", "hidden", "scheduled")]
    ours = sorted(_pages(EventPage, keys), key=lambda page: page.pk)
    djangos = sorted(
        EventPage.objects.filter(pk__in=keys).defer_streamfields(), key=lambda p: p.pk
    )
    assert [type(page) for page in ours] == [EventPage] * 3
    for page, loaded in zip(ours, djangos, strict=True):
        state, loaded_state = vars(page).pop("_state"), vars(loaded).pop("_state")
        assert vars(page) == vars(loaded)
        assert (
            (state.db, state.adding)
            == (loaded_state.db, loaded_state.adding)
            == ("default", False)
        )
        assert page.get_deferred_fields() == loaded.get_deferred_fields()


def test_a_post_init_receiver_sees_the_pages_asked_for_their_urls(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    from django.db.models.signals import post_init

    def hide_the_fair(sender: Any, instance: Any, **kwargs: Any) -> None:
        if instance.slug == "fair":
            instance.hidden = True

    post_init.connect(hide_the_fair, sender=EventPage)
    try:
        locs = [loc for loc, _ in urls(document("a.example"))]
    finally:
        post_init.disconnect(hide_the_fair, sender=EventPage)
    assert "http://a.example/pages/fair/" not in locs
    assert "http://a.example/pages/gala/" in locs


def test_an_origin_outside_allowed_hosts_still_gets_its_types_own_urls(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], settings: Any
) -> None:
    from django_sitemapx.documents import render_page
    from django_sitemapx.locations import Origin

    # An export's origin need not be a host the site answers requests for.
    settings.ALLOWED_HOSTS = ["b.example"]
    bound = wagtail.for_origin(Origin("http", "a.example"))
    page = bound.page(1)
    assert page is not None
    stream = render_page(bound, page, Origin("http", "a.example"))
    assert stream is not None
    locs = [loc for loc, _ in urls(b"".join(stream))]
    assert "http://a.example/pages/fair/" in locs
    assert "http://a.example/pages/gala/schedule/" in locs


# -- events ---------------------------------------------------------------------------------


@pytest.fixture
def invalidated() -> Iterator[list[tuple[str | None, int | None]]]:
    found: list[tuple[str | None, int | None]] = []

    def receiver(sender: Any, section: str | None, page: int | None, **kwargs: Any) -> None:
        found.append((section, page))

    sitemap_invalidated.connect(receiver)
    yield found
    sitemap_invalidated.disconnect(receiver)


@pytest.fixture
def paged(registry: SitemapRegistry, two_sites: dict[str, Page]) -> dict[str, Page]:
    """Two pages a site: a.example has six URLs on pages of at most four rows."""
    registry.register("wagtail", WagtailPageSource, limit=4, max_urls_per_page=2)
    index("a.example")  # counts the pages
    index("b.example")
    return two_sites


def _page_of(host: str, loc: str) -> int:
    for number in (1, 2, 3):
        try:
            data = document(host, number)
        except AssertionError:
            break
        if loc in {found for found, _ in urls(data)}:
            return number
    raise AssertionError(f"{loc} is on no page")


def test_publishing_invalidates_only_the_page_holding_it(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    story = paged["story"]
    number = _page_of("a.example", story.get_full_url())
    with django_capture_on_commit_callbacks(execute=True):
        publish(story)
    assert invalidated == [("wagtail", number)]


def _served(host: str, path: str) -> tuple[bool, bytes]:
    """Whether ``path`` on ``host`` was built now (a miss streams, a hit not), and its body."""
    response = Client().get(path, HTTP_HOST=host)
    assert response.status_code == 200, response
    return response.streaming, content(response)


def test_a_publish_on_one_site_leaves_the_other_hosts_documents_cached(
    paged: dict[str, Page], django_capture_on_commit_callbacks: Any
) -> None:
    # Both hosts have a page 1 (and 2 for a.example): named per host, never one entry.
    built_a, body_a = _served("a.example", "/sitemap-wagtail-1.xml")
    built_b, body_b = _served("b.example", "/sitemap-wagtail-1.xml")
    assert built_a and built_b and body_a != body_b
    for host in ("a.example", "b.example"):
        assert _served(host, "/sitemap-wagtail-1.xml")[0] is False  # each its own hit
        _served(host, "/sitemap.xml")
        assert _served(host, "/sitemap.xml")[0] is False
    # A page of a.example's page 1: the number b.example's only page has too.
    page = next(
        paged[name]
        for name in ("news", "story", "event")
        if _page_of("a.example", paged[name].get_full_url()) == 1
    )
    with django_capture_on_commit_callbacks(execute=True):
        publish(page)
    # b.example's page of the same number and its index are still the cached documents.
    assert _served("b.example", "/sitemap-wagtail-1.xml") == (False, body_b)
    assert _served("b.example", "/sitemap.xml")[0] is False
    # a.example's page and index are built again.
    assert _served("a.example", "/sitemap-wagtail-1.xml")[0] is True
    assert _served("a.example", "/sitemap.xml")[0] is True


def test_unpublishing_invalidates_the_page_and_drops_the_url(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    shop = paged["shop"]
    loc = shop.get_full_url()
    with django_capture_on_commit_callbacks(execute=True):
        shop.unpublish()
    assert invalidated == [("wagtail", 1)]
    assert loc not in {found for found, _ in urls(document("b.example"))}


def test_moving_invalidates_the_pages_of_the_page_and_its_descendants(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    news = Page.objects.get(pk=paged["news"].pk)
    with django_capture_on_commit_callbacks(execute=True):
        news.move(paged["b.example"], pos="last-child")
    assert invalidated and all(section == "wagtail" for section, _ in invalidated)
    assert all(page is not None for _, page in invalidated)
    b = every_loc("b.example")
    assert {"http://b.example/pages/news/", "http://b.example/pages/news/story/"} <= b
    assert not any("/news/" in loc for loc in every_loc("a.example"))


def test_deleting_invalidates_the_page_holding_it(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    event = paged["event"]
    number = _page_of("a.example", event.get_full_url())
    with django_capture_on_commit_callbacks(execute=True):
        Page.objects.get(pk=event.pk).delete()
    # Deleting a live page unpublishes it first: two events, the one page.
    assert set(invalidated) == {("wagtail", number)}
    assert event.get_full_url() not in every_loc("a.example")


def test_a_sites_hostname_change_invalidates_its_old_and_new_hosts(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    rename_site("b.example", "example.com", django_capture_on_commit_callbacks)
    # Each host's pages (test_wagtail_hosts: the other site's stay cached).
    assert invalidated == [("wagtail", None), ("wagtail", None)]
    assert urls(document("example.com"))[0][0] == "http://example.com/pages/"


@pytest.mark.usefixtures("indexnow_on")
def test_publishing_queues_the_pages_url_for_indexnow(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        page = publish(two_sites["news"].add_child(instance=ArticlePage(title="N", slug="n")))
    assert list(PendingUrl.objects.values_list("url", flat=True)) == [page.get_full_url()]


@pytest.mark.usefixtures("indexnow_on")
def test_indexnow_is_never_told_of_a_page_the_sitemap_does_not_list(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from django_sitemapx.models import Override

    PageViewRestriction.objects.create(
        page=two_sites["news"], restriction_type=PageViewRestriction.PASSWORD, password="x"
    )
    with django_capture_on_commit_callbacks(execute=True):
        # Behind a view restriction: published, published again and unpublished, never announced.
        secret = publish(two_sites["news"].add_child(instance=ArticlePage(title="S", slug="s")))
        secret.get_latest_revision().publish()
        secret.unpublish()
    assert not PendingUrl.objects.exists()

    shop = two_sites["shop"]
    Override.objects.create(location=urlsplit(shop.get_full_url()).path, exclude=True)
    with django_capture_on_commit_callbacks(execute=True):
        shop.get_latest_revision().publish()  # excluded by the editor: not announced
        story = two_sites["story"]
        story.move(two_sites["a.example"], pos="last-child")  # out of the restricted news
    story.refresh_from_db()
    # Its URL under the restricted page was never listed; its new one is.
    assert list(PendingUrl.objects.values_list("url", flat=True)) == [story.get_full_url()]


@pytest.mark.usefixtures("indexnow_on")
def test_a_moved_draft_is_not_announced_its_live_descendants_are(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    news = two_sites["news"]
    draft = news.add_child(instance=ArticlePage(title="D", slug="d", live=False))
    with django_capture_on_commit_callbacks(execute=True):
        draft.move(two_sites["a.example"], pos="last-child")
        news.move(two_sites["event"], pos="last-child")  # with its live story
    story = Page.objects.get(pk=two_sites["story"].pk)
    assert sorted(PendingUrl.objects.values_list("url", flat=True)) == sorted(
        [
            "http://a.example/pages/news/",
            "http://a.example/pages/news/story/",
            "http://a.example/pages/fair/news/",
            story.get_full_url(),
        ]
    )


def test_a_removed_pages_section_records_what_wagtail_stops_listing(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from django_sitemapx.models import RemovedUrl
    from django_sitemapx.registry import default_registry
    from django_sitemapx.removed import RemovedSource

    default_registry.register("removed", RemovedSource, days=30)
    try:
        story, shop = two_sites["story"], two_sites["shop"]
        url = story.get_full_url()
        with django_capture_on_commit_callbacks(execute=True):
            story.unpublish()
            shop.delete()  # with its café
        shop_urls = ["http://b.example/pages/shop/", "http://b.example/pages/shop/caf%C3%A9/"]
        assert sorted(RemovedUrl.objects.values_list("url", flat=True)) == [url, *shop_urls]
        with django_capture_on_commit_callbacks(execute=True):
            publish(story)  # listed again: no longer removed
        assert sorted(RemovedUrl.objects.values_list("url", flat=True)) == shop_urls
    finally:
        default_registry.unregister("removed")


@pytest.mark.usefixtures("indexnow_on")
def test_a_sites_new_hostname_announces_every_url_it_lists_there(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    listed = every_loc("b.example")
    site = rename_site("b.example", "example.com", django_capture_on_commit_callbacks)
    pending = set(PendingUrl.objects.values_list("url", flat=True))
    moved = {loc.replace("//b.example/", "//example.com/") for loc in listed}
    # b.example is still served (ALLOWED_HOSTS): what it listed changed there too.
    assert pending == moved | listed
    assert moved == every_loc("example.com")

    PendingUrl.objects.all().delete()
    site.site_name = "renamed"  # nothing the sitemap says changed: nothing is announced
    with django_capture_on_commit_callbacks(execute=True):
        site.save()
    assert not PendingUrl.objects.exists()


@pytest.mark.usefixtures("indexnow_on")
def test_a_sites_new_hostname_is_announced_by_a_task_on_the_indexnow_backend(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    module = tasks_module()
    assert module is not None
    # A backend that runs nothing: what the save enqueued, a worker would run.
    settings.TASKS = {
        "default": {"BACKEND": f"{module.__name__}.backends.immediate.ImmediateBackend"},
        "later": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"},
    }
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = "later"
    listed = every_loc("b.example")
    rename_site("b.example", "example.com", django_capture_on_commit_callbacks)
    # The request that saved the site read none of its documents.
    assert not PendingUrl.objects.exists()
    (enqueued,) = module.task_backends["later"].results
    assert (enqueued.args, enqueued.kwargs) == (["b.example", "example.com"], {})

    with django_capture_on_commit_callbacks(execute=True):
        assert enqueued.task.call(*enqueued.args) == 2 * len(listed)
    pending = set(PendingUrl.objects.values_list("url", flat=True))
    assert pending == listed | {loc.replace("//b.example/", "//example.com/") for loc in listed}


@pytest.mark.usefixtures("indexnow_on")
def test_a_new_hostname_the_task_backend_cannot_take_is_announced_in_process(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
    settings: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = "no-such-backend"
    rename_site("b.example", "example.com", django_capture_on_commit_callbacks)
    assert "could not be enqueued on the 'no-such-backend' task backend" in caplog.text
    assert PendingUrl.objects.filter(url__startswith="http://example.com/").exists()


# -- checks ---------------------------------------------------------------------------------


def test_a_wagtail_site_outside_allowed_hosts_is_warned(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    Site.objects.create(hostname="c.example", port=80, root_page=two_sites["news"])
    out = StringIO()
    call_command("check", databases=["default"], stdout=out, stderr=out)
    assert "django_sitemapx.W401" in out.getvalue()
    assert "'c.example'" in out.getvalue()
    assert "'a.example'" not in out.getvalue()


def test_the_source_warns_without_its_app(wagtail: WagtailPageSource) -> None:
    out = StringIO()
    call_command("check", stdout=out, stderr=out)
    assert "W402" not in out.getvalue()
    # Swapping INSTALLED_APPS reloads URLconfs Wagtail's API cannot mount twice: the
    # app registry's answer is changed for the one app instead.
    from django.apps import apps

    installed = apps.is_installed
    apps.is_installed = lambda name: name != "django_sitemapx.contrib.wagtail" and installed(name)  # type: ignore[method-assign]
    try:
        assert [message.id for message in wagtail.check()] == ["django_sitemapx.W402"]
    finally:
        del apps.is_installed


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_publishing_marks_the_hosts_own_page_changed(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from django_sitemapx.models import PageState

    def marks() -> dict[tuple[str, int], int]:
        # Per page: a host may have several (the keys grow with the tests run before).
        rows = PageState.objects.filter(section__startswith="wagtail@")
        return {
            (name, number): changes
            for name, number, changes in rows.values_list("section", "number", "changes")
        }

    before = marks()
    with django_capture_on_commit_callbacks(execute=True):
        page = publish(paged["b.example"].add_child(instance=ArticlePage(title="T", slug="t")))
    after = marks()
    changed = {name for name, number in after if after[name, number] != before.get((name, number))}
    assert changed == {"wagtail@b.example"}
    assert invalidated == [("wagtail", _page_of("b.example", page.get_full_url()))]


def test_a_host_no_wagtail_site_serves_has_no_section(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    Site.objects.update(is_default_site=False)  # no fallback for unknown hosts
    assert Client().get("/sitemap-wagtail-1.xml", HTTP_HOST="example.com").status_code == 404
    assert b"sitemap-wagtail" not in Client().get("/sitemap.xml", HTTP_HOST="example.com").content
    assert b"sitemap-wagtail" in index("b.example")
