"""robots.txt: the view, the template tags and the helpers, per requested host."""

from __future__ import annotations

import pytest
from django.contrib.sites.models import Site
from django.template import Context, Template, TemplateSyntaxError
from django.test import RequestFactory, override_settings

from django_sitemapx.robots import sitemap_index_url_for_request, sitemap_lines
from django_sitemapx.views import robots_txt

pytestmark = pytest.mark.django_db


def test_the_view_serves_the_rules_then_the_sitemap_line(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/robots.txt")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == (
        "User-agent: *\nDisallow:\n\nSitemap: http://testserver/sitemap.xml\n"
    )


@pytest.mark.parametrize(
    ("host", "secure", "line"),
    [
        ("example.com", True, "Sitemap: https://example.com/sitemap.xml"),
        ("other.example", False, "Sitemap: http://other.example/sitemap.xml"),
        ("example.com:8443", True, "Sitemap: https://example.com:8443/sitemap.xml"),
    ],
)
def test_the_line_names_the_requested_hosts_index(client, host, secure, line) -> None:  # type: ignore[no-untyped-def]
    with override_settings(ALLOWED_HOSTS=["example.com", "other.example"]):
        # The port is kept when the request reached the server on it (#14).
        port = host.partition(":")[2] or ("443" if secure else "80")
        response = client.get("/robots.txt", HTTP_HOST=host, SERVER_PORT=port, secure=secure)

    assert response.content.decode().splitlines()[-1] == line


@override_settings(SITEMAPX_PROTOCOL="https")
def test_the_line_follows_the_scheme_setting(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/robots.txt")

    assert "Sitemap: https://testserver/sitemap.xml\n" in response.content.decode()


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=None)
def test_with_the_sites_framework_each_site_gets_its_own_domain(client) -> None:  # type: ignore[no-untyped-def]
    Site.objects.update_or_create(pk=1, defaults={"domain": "example.com", "name": "a"})
    Site.objects.create(domain="other.example", name="b")

    first = client.get("/robots.txt", HTTP_HOST="example.com").content.decode()
    second = client.get("/robots.txt", HTTP_HOST="other.example").content.decode()
    unknown = client.get("/robots.txt", HTTP_HOST="testserver").content.decode()

    assert first.endswith("Sitemap: http://example.com/sitemap.xml\n")
    assert second.endswith("Sitemap: http://other.example/sitemap.xml\n")
    # No site serves this host: the rules, and no sitemap to announce.
    assert unknown == "User-agent: *\nDisallow:\n\n"


@pytest.mark.parametrize(
    ("rules", "body"),
    [
        ("User-agent: *\nDisallow: /admin/", "User-agent: *\nDisallow: /admin/\n\n"),
        ("User-agent: *\nDisallow: /a\n\n\n", "User-agent: *\nDisallow: /a\n\n"),
        ("", ""),
        ("Disallow: /search?q=<x>&y", "Disallow: /search?q=<x>&y\n\n"),
    ],
)
def test_the_rules_come_from_the_setting_unescaped(client, rules, body) -> None:  # type: ignore[no-untyped-def]
    with override_settings(SITEMAPX_ROBOTS_RULES=rules):
        response = client.get("/robots.txt")

    assert response.content.decode() == body + "Sitemap: http://testserver/sitemap.xml\n"


@override_settings(SITEMAPX_FILES_BASE_URL="https://cdn.example.net/sitemaps/")
def test_exported_files_served_elsewhere_are_announced_at_their_base_url(client) -> None:  # type: ignore[no-untyped-def]
    body = client.get("/robots.txt", HTTP_HOST="example.com").content.decode()

    assert body.endswith("\nSitemap: https://cdn.example.net/sitemaps/sitemap.xml\n")


@override_settings(SITEMAPX_SERVE_FROM_STORAGE="default")
def test_files_served_from_storage_by_the_app_are_at_the_hosts_own_url(client) -> None:  # type: ignore[no-untyped-def]
    body = client.get("/robots.txt", HTTP_HOST="example.com").content.decode()

    assert body.endswith("\nSitemap: http://example.com/sitemap.xml\n")


@override_settings(ROOT_URLCONF="tests.layout_urls")
def test_the_index_path_comes_from_the_urlconf() -> None:
    request = RequestFactory().get("/robots.txt")

    assert sitemap_lines(request) == "Sitemap: http://testserver/maps/sitemap.xml\n"


def test_a_project_template_places_the_line_with_the_tags() -> None:
    request = RequestFactory().get("/robots.txt", HTTP_HOST="example.com")

    response = robots_txt(request, template_name="testapp/robots.txt")

    assert response.content.decode() == (
        "User-agent: *\nDisallow: /private/\n\n"
        "Sitemap: http://example.com/sitemap.xml\n"
        "# index: http://example.com/sitemap.xml\n"
    )


def test_the_tags_in_any_template() -> None:
    template = Template("{% load sitemapx %}{% sitemap_robots_lines %}|{% sitemap_index_url %}")
    request = RequestFactory().get("/", HTTP_HOST="other.example")

    assert template.render(Context({"request": request})) == (
        "Sitemap: http://other.example/sitemap.xml\n|http://other.example/sitemap.xml"
    )


@pytest.mark.parametrize("tag", ["sitemap_robots_lines", "sitemap_index_url"])
def test_a_tag_without_the_request_says_what_is_missing(tag: str) -> None:
    template = Template(f"{{% load sitemapx %}}{{% {tag} %}}")

    with pytest.raises(TemplateSyntaxError, match="needs the request"):
        template.render(Context({}))


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=None)
def test_the_helpers_give_nothing_for_a_host_no_site_serves() -> None:
    request = RequestFactory().get("/", HTTP_HOST="testserver")

    assert sitemap_index_url_for_request(request) is None
    assert sitemap_lines(request) == ""


def test_a_host_that_serves_no_section_gets_no_sitemap_line(client, registry) -> None:  # type: ignore[no-untyped-def]
    import django_sitemapx as sitemapx

    registry.register("pages", sitemapx.StaticSource, url_names=["home"], sites=["example.com"])
    with override_settings(ALLOWED_HOSTS=["example.com", "other.example"]):
        served = client.get("/robots.txt", HTTP_HOST="example.com").content.decode()
        other = client.get("/robots.txt", HTTP_HOST="other.example").content.decode()
        # Its index is a 404: pointing crawlers at it would only cost them a request.
        assert client.get("/sitemap.xml", HTTP_HOST="other.example").status_code == 404
    assert served.endswith("Sitemap: http://example.com/sitemap.xml\n")
    assert "Sitemap:" not in other


def test_every_index_file_gets_a_line(client, registry, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import django_sitemapx as sitemapx

    monkeypatch.setattr("django_sitemapx.documents.INDEX_CAPACITY", 1)
    registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    registry.register("more", sitemapx.StaticSource, url_names=["about"])
    lines = client.get("/robots.txt").content.decode().splitlines()
    assert [line for line in lines if line.startswith("Sitemap:")] == [
        "Sitemap: http://testserver/sitemap.xml",
        "Sitemap: http://testserver/sitemap-index-2.xml",
    ]
    assert client.get("/sitemap-index-2.xml").status_code == 200


# -- data cannot add HTML or robots.txt lines (#28) ----------------------------------

HOSTILE_DOMAINS = [
    '"><script>alert(1)</script>',
    "example.com\"onmouseover='alert(1)'",
    "example.com/<b>",
    "exa<mple.com",
    "example.com&x",
    "example.com\nDisallow: /",
    "example.com\r\nUser-agent: evil",
    "example.com\rDisallow: /",
    "example.com/\nSitemap: https://evil.example/sitemap.xml",
    "example.com%0ADisallow: /",
    "example.com\x0bDisallow: /",  # (PostgreSQL cannot store a NUL)
    "example.com\tx",
    "example.com\u2028Disallow: /",
    "example.com\x85Disallow: /",
]


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=1)
@pytest.mark.parametrize("domain", HOSTILE_DOMAINS)
def test_a_site_domain_that_is_no_host_adds_no_line_and_no_markup(client, domain) -> None:  # type: ignore[no-untyped-def]
    # Site.domain is data an editor may change: "><script> gave stored XSS through
    # {% sitemap_index_url %}, a newline a rule of its own in robots.txt.
    Site.objects.update_or_create(pk=1, defaults={"domain": domain, "name": "a"})
    Site.objects.clear_cache()

    body = client.get("/robots.txt").content.decode()
    html = Template(
        '{% load sitemapx %}<a href="{% sitemap_index_url %}">{% sitemap_robots_lines %}</a>'
    ).render(Context({"request": RequestFactory().get("/", HTTP_HOST="example.com")}))

    assert body == "User-agent: *\nDisallow:\n\n"
    assert html == '<a href=""></a>'
    assert client.get("/sitemap.xml").status_code == 404


@pytest.mark.parametrize(
    ("base_url", "escaped"),
    [
        ("https://cdn.example.net/a&b", "https://cdn.example.net/a&amp;b/sitemap.xml"),
        ("https://cdn.example.net/it's", "https://cdn.example.net/it&#x27;s/sitemap.xml"),
        ('https://cdn.example.net/"x"', "https://cdn.example.net/%22x%22/sitemap.xml"),
        ("https://cdn.example.net/<b>", "https://cdn.example.net/%3Cb%3E/sitemap.xml"),
    ],
)
def test_the_tags_escape_what_they_put_in_html(base_url: str, escaped: str) -> None:
    template = Template("{% load sitemapx %}{% sitemap_index_url %}|{% sitemap_robots_lines %}")
    request = RequestFactory().get("/", HTTP_HOST="example.com")

    with override_settings(SITEMAPX_FILES_BASE_URL=base_url):
        html = template.render(Context({"request": request}))
        text = Template(
            "{% load sitemapx %}{% autoescape off %}{% sitemap_index_url %}{% endautoescape %}"
        ).render(Context({"request": request}))

    assert html == f"{escaped}|Sitemap: {escaped}\n"
    assert text == base_url.replace('"', "%22").replace("<", "%3C").replace(">", "%3E") + (
        "/sitemap.xml"
    )


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=1)
@pytest.mark.parametrize("domain", ["example.com\n", "\nexample.com", " example.com\r\n"])
def test_line_breaks_around_a_site_domain_are_dropped(client, domain) -> None:  # type: ignore[no-untyped-def]
    Site.objects.update_or_create(pk=1, defaults={"domain": domain, "name": "a"})
    Site.objects.clear_cache()

    body = client.get("/robots.txt").content.decode()

    assert body == "User-agent: *\nDisallow:\n\nSitemap: http://example.com/sitemap.xml\n"
