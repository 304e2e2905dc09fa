"""What the view-level assertions of Django's sitemap tests check, asked of our views.

Each test registers sitemaps of ``tests.contrib_sitemaps`` unchanged and requests
our documents. Where we differ from contrib on purpose the test says so (and
docs/guide/migrating-from-contrib.md lists it).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory, override_settings
from django.utils import translation

from django_sitemapx import views
from django_sitemapx.locations import Origin
from django_sitemapx.registry import SitemapRegistry
from tests import contrib_sitemaps as maps
from tests.conftest import NS, content, locs, validate_sitemap
from tests.contribapp.models import Thing, TranslatedThing

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.contrib_urls")]

TODAY = datetime.date.today().isoformat()


class ReadingClient(Client):
    """Reads each streamed body at once, as a crawler does, so the build lock is released."""

    def get(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        response = super().get(*args, **kwargs)
        if response.streaming:
            response.streaming_content = [b"".join(response.streaming_content)]
        return response


@pytest.fixture
def client() -> Client:
    return ReadingClient(HTTP_HOST="example.com")


def register(registry: SitemapRegistry, **sitemaps: Any) -> None:
    for name, sitemap in sitemaps.items():
        registry.register(name.replace("_", "-"), sitemap)


def index_entries(response: Any) -> list[tuple[str, str | None]]:
    root = validate_sitemap(content(response))
    return [
        (
            element.findtext("sm:loc", namespaces=NS),
            element.findtext("sm:lastmod", namespaces=NS),
        )
        for element in root.iterfind("sm:sitemap", NS)
    ]


def url_values(response: Any) -> list[dict[str, str]]:
    root = validate_sitemap(content(response))
    return [
        {child.tag.split("}")[1]: child.get("href") or child.text for child in url}
        for url in root.iterfind("sm:url", NS)
    ]


# -- the index ------------------------------------------------------------------------


def test_simple_index(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    assert index_entries(client.get("/sitemap.xml")) == [
        ("http://example.com/sitemap-simple-1.xml", TODAY)
    ]


def test_an_instance_serves_as_a_class_does(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl())
    assert index_entries(client.get("/sitemap.xml")) == [
        ("http://example.com/sitemap-simple-1.xml", TODAY)
    ]


def test_a_paged_sitemap_lists_every_page(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.Paged)
    assert index_entries(client.get("/sitemap.xml")) == [
        ("http://example.com/sitemap-simple-1.xml", TODAY),
        ("http://example.com/sitemap-simple-2.xml", TODAY),
    ]
    assert len(url_values(client.get("/sitemap-simple-2.xml"))) == 1


def test_get_latest_lastmod_none_leaves_the_index_lastmod_out(
    client: Client, registry: SitemapRegistry
) -> None:
    register(registry, latest=maps.LatestNone)
    assert index_entries(client.get("/sitemap.xml")) == [
        ("http://example.com/sitemap-latest-1.xml", None)
    ]


def test_get_latest_lastmod_gives_the_index_lastmod(
    client: Client, registry: SitemapRegistry
) -> None:
    register(registry, latest=maps.LatestMarch13)
    # A naive datetime is read in TIME_ZONE (Europe/Paris): contrib writes no offset.
    assert index_entries(client.get("/sitemap.xml")) == [
        ("http://example.com/sitemap-latest-1.xml", "2013-03-13T10:00:00+01:00")
    ]


def test_an_aware_latest_lastmod_keeps_its_offset(
    client: Client, registry: SitemapRegistry
) -> None:
    register(registry, tz=maps.March13Minus5)
    assert index_entries(client.get("/sitemap.xml"))[0][1] == "2013-03-13T10:00:00-05:00"


def test_generic_sitemap_index_lastmod(client: Client, registry: SitemapRegistry) -> None:
    Thing.objects.create(name="x", lastmod=maps.MARCH_13.replace(tzinfo=datetime.UTC))
    register(registry, generic=maps.generic_dated())
    assert index_entries(client.get("/sitemap.xml")) == [
        ("http://example.com/sitemap-generic-1.xml", "2013-03-13T10:00:00+00:00")
    ]


def test_callable_lastmod_on_some_items_only(client: Client, registry: SitemapRegistry) -> None:
    register(registry, callable_lastmod=maps.CallablePartial)
    index = client.get("/sitemap.xml")
    assert index_entries(index) == [("http://example.com/sitemap-callable-lastmod-1.xml", None)]
    page = client.get("/sitemap-callable-lastmod-1.xml")
    assert url_values(page) == [
        {"loc": "http://example.com/location/", "lastmod": "2013-03-13T10:00:00+01:00"},
        {"loc": "http://example.com/location/"},
    ]
    assert not index.has_header("Last-Modified")
    assert not page.has_header("Last-Modified")


def test_callable_lastmod_on_every_item(client: Client, registry: SitemapRegistry) -> None:
    register(registry, callable_lastmod=maps.CallableFull)
    index = client.get("/sitemap.xml")
    page = client.get("/sitemap-callable-lastmod-1.xml")
    assert index_entries(index)[0][1] == "2014-03-13T10:00:00+01:00"
    # 10:00 in Paris (naive, read in TIME_ZONE); contrib reads it as UTC.
    assert index["Last-Modified"] == page["Last-Modified"] == "Thu, 13 Mar 2014 09:00:00 GMT"


def test_a_section_without_items_is_left_out(client: Client, registry: SitemapRegistry) -> None:
    register(registry, callable_lastmod=maps.CallableEmpty, simple=maps.OneUrl)
    # Contrib lists it and serves an empty <urlset>, which the schema refuses.
    assert [loc for loc, _ in index_entries(client.get("/sitemap.xml"))] == [
        "http://example.com/sitemap-simple-1.xml"
    ]
    assert client.get("/sitemap-callable-lastmod-1.xml").status_code == 404


def test_no_section_at_all_is_a_404(client: Client, registry: SitemapRegistry) -> None:
    assert client.get("/sitemap.xml").status_code == 404


# -- pages ------------------------------------------------------------------------------


def test_simple_section(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    assert url_values(client.get("/sitemap-simple-1.xml")) == [
        {
            "loc": "http://example.com/location/",
            "lastmod": TODAY,
            "changefreq": "never",
            "priority": "0.5",
        }
    ]


@pytest.mark.parametrize(
    "path", ["/sitemap-other-1.xml", "/sitemap-simple-0.xml", "/sitemap-simple-test.xml"]
)
def test_unknown_section_and_bad_pages_are_404(
    client: Client, registry: SitemapRegistry, path: str
) -> None:
    register(registry, simple=maps.OneUrl)
    assert client.get(path).status_code == 404


def test_empty_section_is_a_404(client: Client, registry: SitemapRegistry) -> None:
    register(registry, empty=maps.NoItems)
    assert client.get("/sitemap-empty-1.xml").status_code == 404


def test_priority_is_not_localized(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    with translation.override("fr"):
        values = url_values(client.get("/sitemap-simple-1.xml"))
    assert values[0]["priority"] == "0.5" and values[0]["lastmod"] == TODAY


@override_settings(SITEMAPX_USE_SITES=True)
def test_the_sites_framework_domain(client: Client, registry: SitemapRegistry) -> None:
    from django.contrib.sites.models import Site

    Site.objects.update_or_create(pk=1, defaults={"domain": "example.com"})
    Site.objects.clear_cache()
    register(registry, simple=maps.OneUrl)
    response = ReadingClient(HTTP_HOST="other.example").get("/sitemap-simple-1.xml")
    assert locs(validate_sitemap(content(response))) == ["http://example.com/location/"]


def test_without_the_sites_framework_the_request_host(registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    response = ReadingClient(HTTP_HOST="testserver").get("/sitemap-simple-1.xml")
    assert locs(validate_sitemap(content(response))) == ["http://testserver/location/"]


def test_generic_sitemap(client: Client, registry: SitemapRegistry) -> None:
    thing = Thing.objects.create(name="x")
    register(registry, generic=maps.generic())
    response = client.get("/sitemap-generic-1.xml")
    assert url_values(response) == [{"loc": f"http://example.com/things/{thing.pk}/"}]
    assert not response.has_header("Last-Modified")


def test_generic_sitemap_lastmod(client: Client, registry: SitemapRegistry) -> None:
    thing = Thing.objects.create(name="x", lastmod=maps.MARCH_13.replace(tzinfo=datetime.UTC))
    register(registry, generic=maps.generic_dated())
    response = client.get("/sitemap-generic-1.xml")
    assert url_values(response) == [
        {"loc": f"http://example.com/things/{thing.pk}/", "lastmod": "2013-03-13T10:00:00+00:00"}
    ]
    assert response["Last-Modified"] == "Wed, 13 Mar 2013 10:00:00 GMT"


# -- Last-Modified ------------------------------------------------------------------------


@pytest.mark.parametrize("cache_alias", ["default", None])
@pytest.mark.parametrize(
    ("sitemap", "expected"),
    [
        (maps.March13, "Wed, 13 Mar 2013 09:00:00 GMT"),  # naive: 10:00 in Europe/Paris
        (maps.March13Date, "Tue, 12 Mar 2013 23:00:00 GMT"),  # midnight in Europe/Paris
        (maps.March13Minus5, "Wed, 13 Mar 2013 15:00:00 GMT"),
        (maps.MixedAttribute, None),  # a static lastmod-less sitemap: no lastmod at all
        (maps.CallablePartial, None),  # some items have none
    ],
)
def test_last_modified_of_a_page(
    client: Client, registry: SitemapRegistry, sitemap: Any, expected: str | None, cache_alias: Any
) -> None:
    register(registry, section=sitemap)
    with override_settings(SITEMAPX_CACHE_ALIAS=cache_alias):
        first = client.get("/sitemap-section-1.xml")
        again = client.get("/sitemap-section-1.xml")  # a cache hit when the cache is on
    for response in (first, again):
        assert response.get("Last-Modified") == expected


@pytest.mark.parametrize("cache_alias", ["default", None])
@pytest.mark.parametrize(
    ("sitemaps", "expected"),
    [
        ({"older": maps.March13Date, "lastmod": maps.March13}, "Wed, 13 Mar 2013 09:00:00 GMT"),
        ({"no-lastmod": maps.CallablePartial, "lastmod": maps.March13}, None),
        ({"lastmod": maps.March13, "no-lastmod": maps.CallablePartial}, None),
        (
            {"date": maps.March13Date, "datetime": maps.March13, "newer": maps.April20},
            "Sat, 20 Apr 2013 03:00:00 GMT",
        ),
        (
            {"newer": maps.April20, "datetime": maps.March13, "date": maps.March13Date},
            "Sat, 20 Apr 2013 03:00:00 GMT",
        ),
    ],
)
def test_last_modified_of_the_index(
    client: Client,
    registry: SitemapRegistry,
    sitemaps: dict[str, Any],
    expected: str | None,
    cache_alias: Any,
) -> None:
    for name, sitemap in sitemaps.items():
        registry.register(name, sitemap)
    with override_settings(SITEMAPX_CACHE_ALIAS=cache_alias):
        first = client.get("/sitemap.xml")
        again = client.get("/sitemap.xml")
    for response in (first, again):
        assert response.get("Last-Modified") == expected


# -- headers and protocol -------------------------------------------------------------------


def test_x_robots_tag_default_and_setting(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    assert client.get("/sitemap.xml")["X-Robots-Tag"] == "noindex"
    assert client.get("/sitemap-simple-1.xml")["X-Robots-Tag"] == "noindex"
    with override_settings(SITEMAPX_X_ROBOTS_TAG="noindex, noodp, noarchive"):
        assert client.get("/sitemap.xml")["X-Robots-Tag"] == "noindex, noodp, noarchive"
    with override_settings(SITEMAPX_X_ROBOTS_TAG=None):
        assert not client.get("/sitemap-simple-1.xml").has_header("X-Robots-Tag")
        etag = client.get("/sitemap-simple-1.xml")["ETag"]
        not_modified = client.get("/sitemap-simple-1.xml", headers={"if-none-match": etag})
        assert not_modified.status_code == 304 and not not_modified.has_header("X-Robots-Tag")
    etag = client.get("/sitemap-simple-1.xml")["ETag"]
    not_modified = client.get("/sitemap-simple-1.xml", headers={"if-none-match": etag})
    assert not_modified.status_code == 304 and not_modified["X-Robots-Tag"] == "noindex"


def test_a_secure_sitemap_over_http(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.SecureOneUrl, plain=maps.OneUrl)
    # The index, requested over http, links the https section with https.
    assert [loc for loc, _ in index_entries(client.get("/sitemap.xml"))] == [
        "https://example.com/sitemap-simple-1.xml",
        "http://example.com/sitemap-plain-1.xml",
    ]
    assert locs(validate_sitemap(content(client.get("/sitemap-simple-1.xml")))) == [
        "https://example.com/location/"
    ]


@override_settings(SECURE_PROXY_SSL_HEADER=None)
def test_https_requests_get_https_links(client: Client, registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    index = client.get("/sitemap.xml", secure=True)
    assert [loc for loc, _ in index_entries(index)] == ["https://example.com/sitemap-simple-1.xml"]
    page = client.get("/sitemap-simple-1.xml", secure=True)
    assert locs(validate_sitemap(content(page))) == ["https://example.com/location/"]


# -- i18n ----------------------------------------------------------------------------------


@override_settings(**maps.EN_PT)
def test_alternates_are_valid_and_reciprocal(client: Client, registry: SitemapRegistry) -> None:
    thing = TranslatedThing.objects.create(name="x")
    register(registry, translated=maps.TranslatedXDefault)
    response = client.get("/sitemap-translated-1.xml")
    root = validate_sitemap(content(response))
    assert root.nsmap["xhtml"] == "http://www.w3.org/1999/xhtml"
    links = [
        [(link.get("hreflang"), link.get("href")) for link in url.iterfind("xhtml:link", NS_X)]
        for url in root.iterfind("sm:url", NS)
    ]
    expected = [
        ("en", f"http://example.com/en/translated/{thing.pk}/"),
        ("pt", f"http://example.com/pt/translated/{thing.pk}/"),
        ("x-default", f"http://example.com/translated/{thing.pk}/"),
    ]
    assert links == [expected, expected]


@override_settings(LANGUAGES=[("en-us", "English"), ("zh-hans", "Chinese")], LANGUAGE_CODE="en-us")
def test_hreflang_in_bcp47_case(client: Client, registry: SitemapRegistry) -> None:
    TranslatedThing.objects.create(name="x")
    register(registry, translated=maps.TranslatedAlternates)
    root = validate_sitemap(content(client.get("/sitemap-translated-1.xml")))
    assert {link.get("hreflang") for link in root.iterfind(".//xhtml:link", NS_X)} == {
        "en-US",
        "zh-Hans",
    }


NS_X = {**NS, "xhtml": "http://www.w3.org/1999/xhtml"}


# -- contrib's view arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("view", "arguments", "named"),
    [
        (views.index, {"sitemaps": {"simple": maps.OneUrl}}, "sitemaps"),
        (views.index, {"template_name": "custom_sitemap_index.xml"}, "template_name"),
        (views.index, {"sitemap_url_name": "x"}, "sitemap_url_name"),
        (views.section, {"section": "simple", "template_name": "t.xml"}, "template_name"),
        (views.section, {"section": "simple", "sitemaps": {}}, "sitemaps"),
        (views.section, {"section": "simple", "colour": "red"}, "colour"),
    ],
)
def test_contrib_arguments_are_refused_by_name(
    registry: SitemapRegistry, view: Any, arguments: dict[str, Any], named: str
) -> None:
    register(registry, simple=maps.OneUrl)
    request = RequestFactory(HTTP_HOST="example.com").get("/sitemap.xml")
    with pytest.raises(ImproperlyConfigured, match=f"takes no '{named}' argument"):
        view(request, **arguments)


def test_template_name_is_refused_pointing_to_news_source(registry: SitemapRegistry) -> None:
    # Contrib projects pass template_name for a Google News sitemap.
    register(registry, simple=maps.OneUrl)
    request = RequestFactory(HTTP_HOST="example.com").get("/sitemap.xml")
    with pytest.raises(ImproperlyConfigured, match="NewsSource"):
        views.section(request, section="simple", template_name="news_sitemap.xml")


@pytest.mark.urls("tests.urls_urlset_root")
def test_sitemap_xml_can_stay_a_urlset_of_one_section(registry: SitemapRegistry) -> None:
    # contrib's views.sitemap without an index: /sitemap.xml was a <urlset>. The
    # migration guide's pattern keeps it one, the index moved to another path.
    register(registry, simple=maps.OneUrl)
    client = ReadingClient(HTTP_HOST="example.com")
    root = validate_sitemap(content(client.get("/sitemap.xml")))
    assert root.tag == f"{{{NS['sm']}}}urlset"
    assert locs(root) == ["http://example.com/location/"]
    assert [loc for loc, _ in index_entries(client.get("/sitemap_index.xml"))] == [
        "http://example.com/sitemap-simple-1.xml"
    ]


def test_content_type_and_section_arguments(registry: SitemapRegistry) -> None:
    register(registry, simple=maps.OneUrl)
    request = RequestFactory(HTTP_HOST="example.com").get("/sitemap.xml")
    response = views.section(request, section="simple", content_type="text/xml")
    assert response["Content-Type"] == "text/xml"
    assert locs(validate_sitemap(content(response))) == ["http://example.com/location/"]


# -- refused at check, not at registration ----------------------------------------------------


class NeedsArguments(maps.OneUrl):
    def __init__(self, blog: str) -> None:
        self.blog = blog


class TooLarge(maps.OneUrl):
    limit = 100_000


class Sometimes(maps.OneUrl):
    changefreq = "sometimes"


@pytest.mark.parametrize(
    ("sitemap", "words"),
    [
        (NeedsArguments, "NeedsArguments() cannot be created without arguments"),
        (TooLarge, "TooLarge.limit is 100000"),
        (Sometimes, "Sometimes.changefreq"),
    ],
)
def test_a_sitemap_we_cannot_serve_is_refused_by_check(
    client: Client, registry: SitemapRegistry, sitemap: Any, words: str
) -> None:
    register(registry, broken=sitemap, simple=maps.OneUrl)  # registration does not raise
    errors = [
        error
        for error in checks.run_checks()
        if error.id == "django_sitemapx.E110" and "'broken'" in error.msg
    ]
    assert len(errors) == 1 and words in errors[0].msg
    # Until fixed: out of the index, 404, the other sections served.
    assert [loc for loc, _ in index_entries(client.get("/sitemap.xml"))] == [
        "http://example.com/sitemap-simple-1.xml"
    ]
    assert client.get("/sitemap-broken-1.xml").status_code == 404


# -- what a sitemap overrides ----------------------------------------------------------------


class OtherDomain(maps.OneUrl):
    def get_domain(self, site: Any = None) -> str:
        return "www.example.com"


class AlwaysHttps(maps.OneUrl):
    def get_protocol(self, protocol: str | None = None) -> str:
        return "https"


class ExtraUrl(maps.OneUrl):
    def get_urls(self, page: Any = 1, site: Any = None, protocol: Any = None) -> Any:
        urls = super().get_urls(page, site, protocol)
        return [*urls, {"location": f"{protocol}://{site.domain}/extra/", "priority": "0.1"}]


class CallableLocation(maps.OneUrl):
    def items(self) -> list[str]:
        return ["a", "b"]

    def location(self, item: str) -> str:  # type: ignore[override]
        return f"/items/{item}/"

    def priority(self, item: str) -> float:  # type: ignore[override]
        return 0.9 if item == "a" else 0.1


@override_settings(ALLOWED_HOSTS=["testserver", "example.com", "www.example.com"])
def test_get_domain_naming_a_served_host_is_honoured(
    client: Client, registry: SitemapRegistry
) -> None:
    # As contrib writes it: the project serves www.example.com too.
    register(registry, simple=OtherDomain)
    assert locs(validate_sitemap(content(client.get("/sitemap-simple-1.xml")))) == [
        "http://www.example.com/location/"
    ]


def test_get_domain_naming_a_host_the_project_does_not_serve_is_left_out(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    # www.example.com is in neither ALLOWED_HOSTS nor SITEMAPX_HOSTS: a URL there
    # is not this site's to list, whatever location() or get_domain() says.
    register(registry, simple=OtherDomain)
    assert client.get("/sitemap-simple-1.xml").status_code == 404
    assert "1 entries left out" in caplog.text and "other_host" in caplog.text


def test_get_protocol_reaches_the_urls_and_the_index(
    client: Client, registry: SitemapRegistry
) -> None:
    register(registry, simple=AlwaysHttps)
    assert index_entries(client.get("/sitemap.xml"))[0][0] == (
        "https://example.com/sitemap-simple-1.xml"
    )
    assert locs(validate_sitemap(content(client.get("/sitemap-simple-1.xml")))) == [
        "https://example.com/location/"
    ]


def test_get_protocol_decides_the_scheme_of_the_bound_source(registry: SitemapRegistry) -> None:
    # The admin and the export bind sources with for_origin(): they follow it too.
    register(registry, simple=AlwaysHttps)
    bound = registry.get("simple").for_origin(Origin("http", "example.com"))
    assert bound.origin == Origin("https", "example.com")


def test_an_overridden_get_urls_is_called_page_by_page(
    client: Client, registry: SitemapRegistry
) -> None:
    register(registry, simple=ExtraUrl)
    values = url_values(client.get("/sitemap-simple-1.xml"))
    assert [value["loc"] for value in values] == [
        "http://example.com/location/",
        "http://example.com/extra/",
    ]
    assert values[1] == {"loc": "http://example.com/extra/", "priority": "0.1"}


def test_callable_location_and_per_item_values(client: Client, registry: SitemapRegistry) -> None:
    register(registry, items=CallableLocation)
    assert [
        (value["loc"], value["priority"])
        for value in url_values(client.get("/sitemap-items-1.xml"))
    ] == [("http://example.com/items/a/", "0.9"), ("http://example.com/items/b/", "0.1")]


def test_register_options_win_and_leave_the_instance_alone(
    client: Client, registry: SitemapRegistry
) -> None:
    sitemap = maps.Paged()
    registry.register("paged", sitemap, limit=25_000, protocol="https")
    assert sitemap.limit == 50_000 and sitemap.protocol is None
    pages = [loc for loc, _ in index_entries(client.get("/sitemap.xml"))]
    assert pages == [f"https://example.com/sitemap-paged-{n}.xml" for n in (1, 2, 3)]
    assert len(url_values(client.get("/sitemap-paged-3.xml"))) == 1


# -- redirects from contrib's URLs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("/sitemap-simple.xml", "/sitemap-simple-1.xml"),
        ("/sitemap-simple.xml?p=2", "/sitemap-simple-2.xml"),
        ("/sitemap-blog-posts.xml?p=3", "/sitemap-blog-posts-3.xml"),
        ("/old/simple.xml?p=2", "/sitemap-simple-2.xml"),
        ("/sitemaps/index.xml", "/sitemap.xml"),
    ],
)
def test_contribs_urls_redirect_permanently(
    client: Client, registry: SitemapRegistry, old: str, new: str
) -> None:
    register(registry, simple=maps.Paged)
    registry.register("blog-posts", maps.OneUrl)
    response = client.get(old)
    assert response.status_code == 301
    assert response["Location"] == new


@pytest.mark.parametrize(
    "old", ["/sitemap-simple.xml?p=0", "/sitemap-simple.xml?p=x", "/sitemap-nothing.xml"]
)
def test_bad_old_urls_are_404(client: Client, registry: SitemapRegistry, old: str) -> None:
    register(registry, simple=maps.OneUrl)
    assert client.get(old).status_code == 404


def test_our_own_urls_pass_the_redirects(client: Client, registry: SitemapRegistry) -> None:
    registry.register("blog-posts", maps.OneUrl)
    response = client.get("/sitemap-blog-posts-1.xml")
    assert response.status_code == 200
    assert locs(validate_sitemap(content(response))) == ["http://example.com/location/"]


def test_the_index_cannot_redirect_to_itself() -> None:
    from django_sitemapx.redirects import contrib_redirects

    with pytest.raises(ImproperlyConfigured, match="to itself"):
        contrib_redirects(index="sitemap.xml")
    with pytest.raises(ImproperlyConfigured, match="<section>"):
        contrib_redirects(section="sitemap-old.xml")
