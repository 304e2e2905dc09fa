"""The override admin: permissions, the form, the list and the bulk actions."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from django_sitemapx.models import Override
from django_sitemapx.signals import overrides_changed
from tests.support.admin import ADD, CHANGELIST, INSPECT, OVERVIEW, staff_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def received() -> list[dict[str, object]]:
    calls: list[dict[str, object]] = []

    def receiver(**kwargs: object) -> None:
        calls.append(kwargs)

    overrides_changed.connect(receiver)
    yield calls
    overrides_changed.disconnect(receiver)


@pytest.mark.parametrize("name", [CHANGELIST, ADD])
def test_staff_without_the_apps_permissions_is_refused(name: str) -> None:
    assert staff_client().get(reverse(name)).status_code == 403


def test_view_permission_opens_the_list() -> None:
    assert staff_client("view_override").get(reverse(CHANGELIST)).status_code == 200


def test_view_permission_alone_cannot_add() -> None:
    assert staff_client("view_override").get(reverse(ADD)).status_code == 403


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


def test_an_override_of_one_host_from_the_form_the_list_the_filter_and_the_search(
    editor: Client,
    django_capture_on_commit_callbacks,
    received,  # type: ignore[no-untyped-def]
) -> None:
    Override.objects.create(location="/about", exclude=True)
    with django_capture_on_commit_callbacks(execute=True):
        response = editor.post(
            reverse(ADD), {"location": "/about/", "host": "Testserver", "priority": "0.9"}
        )
    assert response.status_code == 302  # the host-less one is another row
    override = Override.objects.get(host="testserver")
    # Placed from its own host's sitemap.
    assert (override.location, override.section, override.page) == ("/about", "pages", 1)
    assert received[-1]["host_locations"] == frozenset({("testserver", "/about")})
    duplicate = editor.post(reverse(ADD), {"location": "/about", "host": "testserver"})
    assert (
        "on this host already exists"
        in (duplicate.context["adminform"].form.errors["location"][0])
    )
    Override.objects.create(location="/about", host="other.example", changefreq="daily")
    body = editor.get(reverse(CHANGELIST)).content.decode()
    assert "on testserver" in body and "on other.example" in body
    one_host = editor.get(reverse(CHANGELIST), {"host": "testserver"}).context["cl"]
    assert [row.host for row in one_host.result_list] == ["testserver"]
    every_host = editor.get(reverse(CHANGELIST), {"host": "-"}).context["cl"]
    assert [row.host for row in every_host.result_list] == [""]
    # A pasted URL finds the override of its host and the one of every host.
    found = editor.get(reverse(CHANGELIST), {"q": "https://other.example/about/"}).context["cl"]
    assert sorted(row.host for row in found.result_list) == ["", "other.example"]
    by_host = editor.get(reverse(CHANGELIST), {"q": "other.example"}).context["cl"]
    assert [row.host for row in by_host.result_list] == ["other.example"]


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
    # The signal names each override's host, so one of a host is not taken for every host's.
    on_b = Override.objects.create(location="/a", host="b.example", exclude=True)
    with django_capture_on_commit_callbacks(execute=True):
        _action(editor, "set_priority", [a, on_b], priority="0.3")
    assert received[-1]["host_locations"] == frozenset({("", "/a"), ("b.example", "/a")})
    assert received[-1]["before"] == {"/a": (False, None, "never", Decimal("0.7"))}
    assert received[-1]["host_before"][("b.example", "/a")] == (True, None, "", None)


def test_a_view_only_user_gets_no_bulk_actions() -> None:
    client = staff_client("view_override")
    a = Override.objects.create(location="/a", exclude=True)
    _action(client, "include_urls", [a])
    assert Override.objects.get(pk=a.pk).exclude


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
    client = staff_client("view_override", "change_override")
    only_excludes = Override.objects.create(location="/c", exclude=True)
    with_priority = Override.objects.create(location="/d", exclude=True, priority=Decimal("0.3"))
    response = _action(client, "include_urls", [only_excludes, with_priority])
    assert "1 URL included again." in response.content.decode()
    assert Override.objects.get(pk=only_excludes.pk).exclude
    assert not Override.objects.get(pk=with_priority.pk).exclude


def test_in_the_sitemap_column_ticks_listed_urls_and_crosses_excluded_ones(
    editor: Client,
) -> None:
    Override.objects.create(location="/about/", priority=Decimal("0.2"), section="pages", page=1)
    Override.objects.create(location="/contact/", exclude=True, section="pages", page=1)
    Override.objects.create(location="/gone/", priority=Decimal("0.3"))
    body = editor.get(reverse(CHANGELIST)).content.decode()
    assert "In the sitemap" in body and ">Excluded<" not in body
    cells = {}
    for location in ("/about", "/contact", "/gone"):
        row = body.split(f">{location}</a>")[1].split("</tr>")[0]
        cells[location] = row.split("field-listed")[1].split("</td>")[0]
    assert 'alt="True"' in cells["/about"]  # listed: a tick
    assert 'alt="False"' in cells["/contact"]  # excluded: a cross
    assert 'alt="None"' in cells["/gone"]  # not found in the sitemap


def test_the_list_loads_the_stylesheet_that_wraps_long_urls(editor: Client) -> None:
    body = editor.get(reverse(CHANGELIST)).content.decode()
    assert "django_sitemapx/admin.css" in body
