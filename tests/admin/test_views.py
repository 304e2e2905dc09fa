"""The URL inspector and the sitemap overview (admin/views.py), with their permissions."""

import contextlib
from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_sitemapx import models
from django_sitemapx.admin.views import SKIP_REASONS
from django_sitemapx.exceptions import SkipReason
from django_sitemapx.models import Override
from example_project.articles.factories import ArticleFactory, CategoryFactory
from tests.conftest import content, locs, validate_sitemap
from tests.support.admin import (
    ADD,
    CHANGELIST,
    EDITOR_PERMISSIONS,
    INSPECT,
    OVERVIEW,
    staff_client,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", [INSPECT, OVERVIEW])
def test_staff_without_the_apps_permissions_is_refused(name: str) -> None:
    assert staff_client().get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", [INSPECT, OVERVIEW])
def test_view_permission_opens_the_inspector_and_the_overview(name: str) -> None:
    assert staff_client("view_override").get(reverse(name)).status_code == 200


def test_anonymous_is_sent_to_login() -> None:
    response = Client().get(reverse(INSPECT))
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_inspector_finds_a_model_row_with_its_values(editor: Client) -> None:
    article = ArticleFactory()
    response = editor.get(
        reverse(INSPECT), {"url": f"http://testserver{article.get_absolute_url()}"}
    )
    context = response.context
    assert context["in_sitemap"] and context["finding"].section == "article"
    assert context["finding"].page == 1
    values = {str(v.label): (v.value, str(v.set_by)) for v in context["values"]}
    assert values["priority"] == ("0.6", "section")
    assert context["override_url"].startswith(reverse(ADD))


def test_inspector_shows_override_origin_and_exclusion(editor: Client) -> None:
    Override.objects.create(location="/about/", priority=Decimal("0.1"), exclude=True)
    context = editor.get(reverse(INSPECT), {"url": "/about"}).context
    assert not context["in_sitemap"] and "excludes" in str(context["reason"])
    values = {str(v.label): (v.value, str(v.set_by)) for v in context["values"]}
    assert values["priority"] == ("0.1", "override")
    assert values["change frequency"] == ("", "not set")
    assert "/change/" in context["override_url"]


def test_inspector_shows_the_override_that_applies_on_the_inspected_host(editor: Client) -> None:
    Override.objects.create(location="/about/", priority=Decimal("0.1"))
    # Another host's exclusion does nothing here.
    Override.objects.create(location="/about/", host="other.example", exclude=True)
    context = editor.get(reverse(INSPECT), {"url": "/about"}).context
    assert context["in_sitemap"] and context["override"].host == ""
    values = {str(v.label): (v.value, str(v.set_by)) for v in context["values"]}
    assert values["priority"] == ("0.1", "override")
    mine = Override.objects.create(location="/about/", host="testserver", priority=Decimal("0.8"))
    response = editor.get(reverse(INSPECT), {"url": "/about"})
    context = response.context
    assert context["override"] == mine
    values = {str(v.label): (v.value, str(v.set_by)) for v in context["values"]}
    assert values["priority"] == ("0.8", "override")
    assert f"/{mine.pk}/change/" in context["override_url"]
    assert "The override of testserver" in response.content.decode()


def test_inspector_looks_a_full_url_up_on_its_own_served_host(editor: Client) -> None:
    Override.objects.create(location="/about/", priority=Decimal("0.1"))
    Override.objects.create(location="/about/", host="other.example", priority=Decimal("0.7"))
    response = editor.get(reverse(INSPECT), {"url": "https://other.example/about/"})
    context = response.context
    assert context["in_sitemap"] and context["finding"].entry[0] == "https://other.example/about/"
    assert context["override"].host == "other.example"
    values = {str(v.label): (v.value, str(v.set_by)) for v in context["values"]}
    assert values["priority"] == ("0.7", "override")
    assert context["document_url"] == "https://other.example/sitemap-pages-1.xml"
    assert "Looked up in the sitemap of other.example" in response.content.decode()
    # A path, or a URL of the admin's own host: the admin's host, as before.
    for url in ("/about/", "http://testserver/about/"):
        context = editor.get(reverse(INSPECT), {"url": url}).context
        assert context["override"].host == "" and context["inspected_host"] is None
        assert context["document_url"] == "/sitemap-pages-1.xml"


def test_inspector_offers_an_override_of_the_inspected_host(editor: Client) -> None:
    context = editor.get(reverse(INSPECT), {"url": "https://other.example/about/"}).context
    assert context["override_url"] == f"{reverse(ADD)}?location=%2Fabout&host=other.example"


@pytest.mark.parametrize(
    "url", ["https://unknown.example/about/", "http://[::1]:8000/about/", "http://.../about/"]
)
def test_inspector_says_a_host_no_sitemap_is_served_on(editor: Client, url: str) -> None:
    response = editor.get(reverse(INSPECT), {"url": url})
    assert response.status_code == 200
    assert not response.context.get("in_sitemap") and "values" not in response.context
    assert "No sitemap is served on this URL" in str(response.context["reason"])


@pytest.mark.parametrize("permission", ["view_article", "change_article"])
def test_inspector_says_filtered_out_to_who_may_view_the_model(permission: str) -> None:
    article = ArticleFactory(is_published=False)
    client = _with_model_permission(permission)
    context = client.get(reverse(INSPECT), {"url": article.get_absolute_url()}).context
    assert not context["in_sitemap"]
    assert "filters it out" in str(context["reason"])


def _with_model_permission(codename: str) -> Client:
    client = staff_client(*EDITOR_PERMISSIONS)
    user = User.objects.get(pk=client.session["_auth_user_id"])
    user.user_permissions.add(Permission.objects.get(codename=codename))
    return client


@pytest.mark.parametrize(
    "permissions",
    [("view_override",), EDITOR_PERMISSIONS, ("view_override", "view_category")],
)
def test_without_view_permission_on_the_model_a_hidden_row_is_no_row(
    permissions: tuple[str, ...],
) -> None:
    # "The row exists but is filtered out" against "no section lists this URL"
    # confirmed a guessed slug of an unpublished article (#28). Without view
    # permission on Article, both answers are the same page, with no query asking.
    client = staff_client(*permissions)
    if "view_category" in permissions:
        user = User.objects.get(pk=client.session["_auth_user_id"])
        user.user_permissions.add(Permission.objects.get(codename="view_category"))
    draft = ArticleFactory(is_published=False, slug="layoffs", category__slug="news")
    assert draft.get_absolute_url() == "/articles/news/layoffs/"
    answers = []
    for slug in ("layoffs", "no-such-article"):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(reverse(INSPECT), {"url": f"/articles/news/{slug}/"})
        context = response.context
        assert not context["in_sitemap"]
        assert "No registered section" in str(context["reason"])
        html = response.content.decode()
        start = html.index('<div class="module" id="inspect-result">')
        result = html[start : html.index("</table>", start)]
        article_queries = [q for q in queries.captured_queries if "articles_article" in q["sql"]]
        answers.append((result.replace(slug, "SLUG"), len(article_queries)))
    assert answers[0] == answers[1]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/articles/nope/missing/", "No registered section"),
        ("/admin/", "No registered section"),
        ("/" + "a" * 2100, "too long"),
        ("ftp://x/", "not a path"),
    ],
)
def test_inspector_says_why_not(editor: Client, url: str, expected: str) -> None:
    context = editor.get(reverse(INSPECT), {"url": url}).context
    assert not context.get("in_sitemap")
    assert expected in str(context["reason"])


def test_overview_lists_sections_pages_and_links(editor: Client) -> None:
    ArticleFactory.create_batch(3)
    Override.objects.create(location="/about", exclude=True, section="pages", page=1)
    response = editor.get(reverse(OVERVIEW))
    rows = {row.section: row for row in response.context["rows"]}
    assert rows["article"].urls == 3 and len(rows["article"].pages) == 1
    assert rows["article"].latest is not None
    assert rows["pages"].excluded == 1
    assert "/sitemap-article-1.xml" in response.content.decode()
    # Another host's exclusions are not this host's.
    Override.objects.create(
        location="/contact", host="other.example", exclude=True, section="pages", page=1
    )
    rows = {row.section: row for row in editor.get(reverse(OVERVIEW)).context["rows"]}
    assert rows["pages"].excluded == 1


def test_overview_counts_a_url_per_row_and_language(editor: Client) -> None:
    # The example's categories are listed in the three LANGUAGES.
    CategoryFactory.create_batch(3)
    response = editor.get(reverse(OVERVIEW))
    rows = {row.section: row for row in response.context["rows"]}
    document = Client().get("/sitemap-category-1.xml")
    assert len(locs(validate_sitemap(content(document)))) == 9
    assert rows["category"].urls == 9 and len(rows["category"].pages) == 1
    assert response.context["total_urls"] == sum(row.urls for row in rows.values())


def test_every_skip_reason_has_a_label_for_editors() -> None:
    assert set(SKIP_REASONS) == set(SkipReason)
    labels = [str(label) for label in SKIP_REASONS.values()]
    assert all(labels) and len(set(labels)) == len(labels)


# -- hostile input (#14): a 200 or a form error, never a 500 ---------------------

HOSTILE_URLS = [
    "http://[x/",
    "https://[::1/a",
    "/articles/news/%00/",
    "/articles/%00/x%00/",
    "http://testserver/articles/news/%00/",
    "/a%/b#c#d[e]",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
@pytest.mark.parametrize("who", ["viewer", "editor"])
def test_hostile_urls_in_the_inspector_and_the_search_never_500(url: str, who: str) -> None:
    ArticleFactory()
    codenames = ("view_override",) if who == "viewer" else EDITOR_PERMISSIONS
    client = staff_client(*codenames)
    client.raise_request_exception = False
    with _nul_queries() as nul:
        inspected = client.get(reverse(INSPECT), {"url": url})
        searched = client.get(reverse(CHANGELIST), {"q": url})
        searched_raw = client.get(reverse(CHANGELIST), {"q": url.replace("%00", "\x00")})
    assert inspected.status_code == 200
    assert searched.status_code == 200
    assert searched_raw.status_code == 200
    # PostgreSQL refuses a NUL in a query (a 500 there): none may reach the database.
    assert nul == []


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_hostile_urls_in_the_add_form_are_form_errors_or_saved(editor: Client, url: str) -> None:
    ArticleFactory()
    editor.raise_request_exception = False
    with _nul_queries() as nul:
        response = editor.post(reverse(ADD), {"location": url, "exclude": "on"})
    assert response.status_code in (200, 302)  # the form again with its error, or saved
    if response.status_code == 200:
        assert response.context["adminform"].form.errors["location"]
    assert nul == []


# Within the form's 2,048 characters as typed, past them once percent-encoded (#28):
# PostgreSQL refused the stored key, a 500.
LONG_ONCE_ENCODED = [
    "/" + "é" * 400,  # 6 characters each once encoded
    "/" + "\U0001f600" * 200,  # 12 each
    "/" + " " * 700 + "a",  # 3 each
    "/a?" + "q=<x>" * 300,
    "https://example.com/" + "ü" * 2000,
    "/" + "a" * 2046 + "é",
]


@pytest.mark.parametrize("url", LONG_ONCE_ENCODED)
@pytest.mark.parametrize("view", ["add", "change"])
def test_a_location_too_long_once_encoded_is_a_form_error_never_a_500(
    editor: Client, url: str, view: str
) -> None:
    assert len(url) <= 2048
    editor.raise_request_exception = False
    if view == "add":
        target = reverse(ADD)
    else:
        override = Override.objects.create(location="/short/", exclude=True)
        target = reverse("admin:django_sitemapx_override_change", args=[override.pk])
    response = editor.post(target, {"location": url, "exclude": "on"})
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors.as_data()["location"]
    assert [error.code for error in errors] == ["too_long"]
    assert "once percent-encoded" in response.content.decode()
    assert all(len(key) <= 2048 for key in Override.objects.values_list("location", flat=True))


@pytest.mark.parametrize("url", ["/" + "a" * 2047, "/" + "é" * 341])
def test_a_location_of_2048_characters_once_encoded_is_saved(editor: Client, url: str) -> None:
    response = editor.post(reverse(ADD), {"location": url, "exclude": "on"})
    assert response.status_code == 302
    assert len(Override.objects.get().location) in (2048, 2047)


@contextlib.contextmanager
def _nul_queries() -> Iterator[list[str]]:
    """The queries run meanwhile whose parameters hold a NUL character."""
    from django.db import connection

    found: list[str] = []

    def watch(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if any(isinstance(p, str) and "\x00" in p for p in (params or ())):
            found.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        yield found


def test_overview_shows_what_the_latest_build_left_out_and_why(editor: Client) -> None:
    from django_sitemapx.registry import default_registry
    from django_sitemapx.sources import ItemSource

    class Custom(ItemSource):
        def location(self, item):  # type: ignore[no-untyped-def]
            return item

    with default_registry.temporarily_empty():
        default_registry.register(
            "custom", Custom, items=lambda: ["/ok/", None, "http://[x/", "https://other.example/"]
        )
        built = Client(HTTP_HOST="testserver").get("/sitemap-custom-1.xml")
        assert built.status_code == 200
        content(built)  # recorded with the document, once it is stored
        response = editor.get(reverse(OVERVIEW))
    (row,) = response.context["rows"]
    assert [(str(label), count) for label, count in row.skipped] == [
        ("its location is not a well-formed path or URL", 2),
        ("the URL is on another host", 1),
    ]
    assert "2 \u00d7 its location is not a well-formed path or URL" in response.content.decode()


def test_inspector_words_an_excluded_url_without_contradiction(editor: Client) -> None:
    Override.objects.create(location="/about", exclude=True, section="pages", page=1)
    body = editor.get(reverse(INSPECT), {"url": "/about/"}).content.decode()
    assert "Override key" not in body and "Address" in body
    assert "URL in the sitemap" not in body and "Listed as" not in body
    assert "Its section builds" in body and "Would be in" in body
    listed = editor.get(reverse(INSPECT), {"url": "/about/"}).content.decode()
    Override.objects.all().delete()
    listed = editor.get(reverse(INSPECT), {"url": "/about/"}).content.decode()
    assert "Listed as" in listed and "Its section builds" not in listed


BROWSE = [
    ("admin:django_sitemapx_browse_section", {"section": "pages"}),
    ("admin:django_sitemapx_browse_page", {"section": "pages", "number": 1}),
]


@override_settings(ROOT_URLCONF="tests.admin_only_urls")
@pytest.mark.parametrize(("name", "kwargs"), [(INSPECT, {}), (OVERVIEW, {}), *BROWSE])
def test_an_export_only_site_explains_instead_of_linking(
    editor: Client, name: str, kwargs: dict[str, object]
) -> None:
    # The sitemap URLs are not included: no NoReverseMatch, no link that would 404.
    ArticleFactory()
    url = reverse(name, kwargs=kwargs)
    response = editor.get(url, {"url": "/about/"} if name == INSPECT else {})
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="not-served"' in body and "sitemap_export" in body
    assert 'href="/sitemap' not in body and ">/sitemap-pages-1.xml</code>" in body


@pytest.mark.parametrize("name", [INSPECT, OVERVIEW])
def test_a_served_site_links_its_documents(editor: Client, name: str) -> None:
    ArticleFactory()
    body = editor.get(reverse(name), {"url": "/about/"} if name == INSPECT else {}).content
    assert b'href="/sitemap-pages-1.xml"' in body and b'id="not-served"' not in body


@pytest.fixture
def no_overrides_table(transactional_db: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The overrides table dropped, as before ``migrate``; created again afterwards."""
    monkeypatch.setattr(models, "_FOUND_TABLES", set())
    with connection.schema_editor() as schema:
        schema.delete_model(Override)
    try:
        yield
    finally:
        with connection.schema_editor() as schema:
            schema.create_model(Override)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("no_overrides_table")
@pytest.mark.parametrize("name", [INSPECT, OVERVIEW])
def test_before_migrate_the_pages_say_to_run_migrate(name: str) -> None:
    ArticleFactory()
    editor = staff_client(*EDITOR_PERMISSIONS)
    response = editor.get(reverse(name), {"url": "/about/"} if name == INSPECT else {})
    assert response.status_code == 200
    assert b'id="not-migrated"' in response.content and b"manage.py migrate" in response.content


def test_inspector_shows_a_urls_images_video_and_news(editor: Client) -> None:
    from django.utils import timezone

    from example_project.articles.models import ArticleImage, ArticleVideo

    article = ArticleFactory(title="Big <news> & more", published_at=timezone.now())
    ArticleImage.objects.create(article=article, url="/img/1.jpg", position=1)
    ArticleImage.objects.create(article=article, url="https://cdn.example.net/2.jpg", position=2)
    ArticleVideo.objects.create(
        article=article,
        title="Clip & co",
        description="A <clip>",
        thumbnail_url="/t.jpg",
        content_url="/c.mp4",
        duration=90,
    )
    response = editor.get(reverse(INSPECT), {"url": article.get_absolute_url()})
    media = {found.section: found for found in response.context["media"]}
    assert set(media) == {"article-images", "news", "videos"}
    assert media["article-images"].images == (
        "http://testserver/img/1.jpg",
        "https://cdn.example.net/2.jpg",
    )
    assert media["videos"].videos[0].duration == "90"
    assert media["news"].news.title == "Big <news> & more"
    html = response.content.decode()
    assert 'id="extensions"' in html
    assert "Big &lt;news&gt; &amp; more" in html and "Clip &amp; co" in html
    assert "https://cdn.example.net/2.jpg" in html


def test_every_extension_skip_reason_is_worded() -> None:
    assert set(SKIP_REASONS) == set(SkipReason)
