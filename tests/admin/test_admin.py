"""The override admin, the URL inspector and the overview, with their permissions."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from django_sitemapx.models import Override
from django_sitemapx.signals import overrides_changed
from example_project.articles.factories import ArticleFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:django_sitemapx_override_changelist"
ADD = "admin:django_sitemapx_override_add"
INSPECT = "admin:django_sitemapx_inspect"
OVERVIEW = "admin:django_sitemapx_overview"


def _staff(*codenames: str) -> Client:
    user = User.objects.create_user(f"user-{'-'.join(codenames) or 'none'}", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="django_sitemapx", codename__in=codenames
        )
    )
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def editor() -> Client:
    return _staff("add_override", "change_override", "delete_override", "view_override")


@pytest.fixture
def received() -> list[dict[str, object]]:
    calls: list[dict[str, object]] = []

    def receiver(**kwargs: object) -> None:
        calls.append(kwargs)

    overrides_changed.connect(receiver)
    yield calls
    overrides_changed.disconnect(receiver)


@pytest.mark.parametrize("name", [CHANGELIST, ADD, INSPECT, OVERVIEW])
def test_staff_without_the_apps_permissions_is_refused(name: str) -> None:
    assert _staff().get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", [CHANGELIST, INSPECT, OVERVIEW])
def test_view_permission_opens_the_list_the_inspector_and_the_overview(name: str) -> None:
    assert _staff("view_override").get(reverse(name)).status_code == 200


def test_view_permission_alone_cannot_add() -> None:
    assert _staff("view_override").get(reverse(ADD)).status_code == 403


def test_anonymous_is_sent_to_login() -> None:
    response = Client().get(reverse(INSPECT))
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_form_shows_validation_errors(editor: Client) -> None:
    response = editor.post(
        reverse(ADD), {"location": "/about/", "priority": "7", "changefreq": "sometimes"}
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "between 0.0 and 1.0" in errors["priority"][0]
    assert "sometimes is not one of the available choices" in errors["changefreq"][0]
    assert not Override.objects.exists()


def test_saving_records_who_and_where_and_notifies(
    editor: Client,
    django_capture_on_commit_callbacks,
    received,  # type: ignore[no-untyped-def]
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = editor.post(
            reverse(ADD), {"location": "https://testserver/about", "priority": "0.9"}
        )
    assert response.status_code == 302
    override = Override.objects.get()
    assert (override.location, override.section, override.page) == ("/about", "pages", 1)
    assert override.changed_by is not None
    assert received[-1]["pages"] == frozenset({("pages", 1)})
    assert received[-1]["everything"] is False
    assert received[-1]["locations"] == frozenset({"/about"})


def test_a_duplicate_in_another_form_is_refused(editor: Client) -> None:
    Override.objects.create(location="/about", exclude=True)
    response = editor.post(
        reverse(ADD), {"location": "https://testserver/about/", "exclude": "on"}
    )
    assert response.status_code == 200
    assert "already exists" in response.context["adminform"].form.errors["location"][0]


def test_list_shows_effective_values_and_search_finds_a_pasted_url(editor: Client) -> None:
    Override.objects.create(location="/about/", priority=Decimal("0.2"), section="pages", page=1)
    Override.objects.create(location="/other/", exclude=True)
    response = editor.get(reverse(CHANGELIST), {"q": "https://testserver/about/"})
    body = response.content.decode()
    assert "/about" in body and "/other" not in body
    assert "0.2" in body and "section&#x27;s value" in body and "pages, page 1" in body
    filtered = editor.get(reverse(CHANGELIST), {"section": "-"}).content.decode()
    assert "/other" in filtered and "/about<" not in filtered


def _action(client: Client, action: str, rows: list[Override], **extra: str):  # type: ignore[no-untyped-def]
    data = {"action": action, "_selected_action": [str(row.pk) for row in rows], **extra}
    return client.post(reverse(CHANGELIST), data, follow=True)


def test_bulk_actions(
    editor: Client,
    django_capture_on_commit_callbacks,
    received,  # type: ignore[no-untyped-def]
) -> None:
    a = Override.objects.create(location="/a", priority=Decimal("0.1"), section="pages", page=1)
    b = Override.objects.create(location="/b", changefreq="daily")
    with django_capture_on_commit_callbacks(execute=True):
        _action(editor, "exclude_urls", [a, b])
    assert set(Override.objects.values_list("exclude", flat=True)) == {True}
    assert received[-1]["pages"] == frozenset({("pages", 1)}) and received[-1]["everything"]
    _action(editor, "set_priority", [a, b], priority="0.7")
    assert set(Override.objects.values_list("priority", flat=True)) == {Decimal("0.7")}
    response = _action(editor, "set_priority", [a], priority="7")
    assert "less than or equal to 1" in response.content.decode()
    _action(editor, "set_changefreq", [a], changefreq="never")
    assert Override.objects.get(pk=a.pk).changefreq == "never"
    response = _action(editor, "set_changefreq", [a], changefreq="")
    assert "Choose a change frequency" in response.content.decode()
    only_excludes = Override.objects.create(location="/c", exclude=True)
    _action(editor, "include_urls", [a, b, only_excludes])
    assert set(Override.objects.values_list("exclude", flat=True)) == {False}
    assert not Override.objects.filter(pk=only_excludes.pk).exists()
    assert Override.objects.get(pk=a.pk).changed_by is not None


def test_a_view_only_user_gets_no_bulk_actions() -> None:
    client = _staff("view_override")
    a = Override.objects.create(location="/a", exclude=True)
    _action(client, "include_urls", [a])
    assert Override.objects.get(pk=a.pk).exclude


def test_inspector_finds_a_model_row_with_its_values(editor: Client) -> None:
    article = ArticleFactory()
    response = editor.get(
        reverse(INSPECT), {"url": f"http://testserver{article.get_absolute_url()}"}
    )
    context = response.context
    assert context["in_sitemap"] and context["finding"].section == "article"
    assert context["finding"].page == 1
    values = {str(v.label): (v.value, str(v.origin)) for v in context["values"]}
    assert values["priority"] == ("0.6", "section")
    assert context["override_url"].startswith(reverse(ADD))


def test_inspector_shows_override_origin_and_exclusion(editor: Client) -> None:
    Override.objects.create(location="/about/", priority=Decimal("0.1"), exclude=True)
    context = editor.get(reverse(INSPECT), {"url": "/about"}).context
    assert not context["in_sitemap"] and "excludes" in str(context["reason"])
    values = {str(v.label): (v.value, str(v.origin)) for v in context["values"]}
    assert values["priority"] == ("0.1", "override")
    assert values["change frequency"] == ("", "not set")
    assert "/change/" in context["override_url"]


def test_inspector_says_filtered_out_by_the_queryset(editor: Client) -> None:
    article = ArticleFactory(is_published=False)
    context = editor.get(reverse(INSPECT), {"url": article.get_absolute_url()}).context
    assert not context["in_sitemap"]
    assert "filters it out" in str(context["reason"])


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


def test_changelist_links_to_the_inspector_and_overview(editor: Client) -> None:
    body = editor.get(reverse(CHANGELIST)).content.decode()
    assert reverse(INSPECT) in body and reverse(OVERVIEW) in body


def test_place_again_refreshes_section_and_page(
    editor: Client,
    django_capture_on_commit_callbacks,
    received,  # type: ignore[no-untyped-def]
) -> None:
    stale = Override.objects.create(location="/about/", exclude=True, section="gone", page=9)
    with django_capture_on_commit_callbacks(execute=True):
        response = _action(editor, "place_again", [stale])
    assert "1 override moved." in response.content.decode()
    stale.refresh_from_db()
    assert (stale.section, stale.page) == ("pages", 1)
    assert received[-1]["pages"] == frozenset({("gone", 9), ("pages", 1)})


def test_include_keeps_exclude_only_overrides_without_the_delete_permission() -> None:
    client = _staff("view_override", "change_override")
    only_excludes = Override.objects.create(location="/c", exclude=True)
    with_priority = Override.objects.create(location="/d", exclude=True, priority=Decimal("0.3"))
    response = _action(client, "include_urls", [only_excludes, with_priority])
    assert "1 URL included again." in response.content.decode()
    assert Override.objects.get(pk=only_excludes.pk).exclude
    assert not Override.objects.get(pk=with_priority.pk).exclude
