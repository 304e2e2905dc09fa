"""CSV export and import of overrides and rules (issue 26): all or nothing, errors by line."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from django_sitemapx.models import Override, Rule
from tests.support.admin import EDITOR_PERMISSIONS, staff_client

pytestmark = pytest.mark.django_db

RULE_PERMISSIONS = ("add_rule", "change_rule", "delete_rule", "view_rule")
OVERRIDE_IMPORT = reverse("admin:django_sitemapx_override_import")
OVERRIDE_EXPORT = reverse("admin:django_sitemapx_override_export")
RULE_IMPORT = reverse("admin:django_sitemapx_rule_import")
RULE_EXPORT = reverse("admin:django_sitemapx_rule_export")


@pytest.fixture
def manager() -> Client:
    return staff_client(*EDITOR_PERMISSIONS, *RULE_PERMISSIONS)


def _upload(client: Client, url: str, text: str | bytes):  # type: ignore[no-untyped-def]
    data = text.encode() if isinstance(text, str) else text
    return client.post(url, {"file": SimpleUploadedFile("rows.csv", data, "text/csv")})


def _download(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]


def test_overrides_export_and_import_back_the_same(manager: Client) -> None:
    Override.objects.create(
        location="/a/",
        priority=Decimal("0.9"),
        lastmod=datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC),
        note="=HYPERLINK(1)",
    )
    Override.objects.create(location="/b", exclude=True, changefreq="daily")
    Override.objects.create(location="/b", host="b.example", priority=Decimal("0.2"))
    text = _download(manager, OVERRIDE_EXPORT)
    assert text.splitlines() == [
        "location,exclude,lastmod,changefreq,priority,note,host",
        "/a,false,2024-05-01T08:00:00+00:00,,0.9,'=HYPERLINK(1),",
        "/b,true,,daily,,,",
        "/b,false,,,0.2,,b.example",
    ]
    Override.objects.all().delete()
    response = _upload(manager, OVERRIDE_IMPORT, text)
    assert response.status_code == 302
    rows = {(o.host, o.location): o for o in Override.objects.all()}
    assert rows["", "/a"].note == "=HYPERLINK(1)" and rows["", "/a"].priority == Decimal("0.9")
    assert rows["", "/b"].exclude and rows["", "/b"].changefreq == "daily"
    assert (
        rows["b.example", "/b"].priority == Decimal("0.2") and not rows["b.example", "/b"].exclude
    )
    assert rows["", "/a"].changed_by is not None


def test_an_import_matches_overrides_by_host_and_location(manager: Client) -> None:
    every_host = Override.objects.create(location="/kept", priority=Decimal("0.1"))
    one_host = Override.objects.create(location="/kept", host="b.example", exclude=True)
    response = _upload(
        manager,
        OVERRIDE_IMPORT,
        # A file without the host column is of every host, as before overrides had one.
        "location,priority\n/kept,0.7\n",
    )
    assert response.status_code == 302
    response = _upload(
        manager,
        OVERRIDE_IMPORT,
        "location,host,priority\n/kept,B.Example.,0.3\n/kept,c.example:8000,0.5\n",
    )
    assert response.status_code == 302
    every_host.refresh_from_db()
    one_host.refresh_from_db()
    assert every_host.priority == Decimal("0.7")
    assert one_host.priority == Decimal("0.3") and one_host.exclude
    assert Override.objects.get(host="c.example:8000").priority == Decimal("0.5")
    assert Override.objects.count() == 3


def test_an_import_refuses_a_bad_host_and_a_host_and_location_twice(manager: Client) -> None:
    text = "location,host,priority\n/a,b.example,0.5\n/a,,0.5\n/a,B.EXAMPLE,0.4\n/b,no host!,0.1\n"
    response = _upload(manager, OVERRIDE_IMPORT, text)
    assert response.status_code == 200
    errors = [str(error) for error in response.context["errors"]]
    assert "Line 4: location: the location and host of line 2 again" in errors
    assert "Line 5: host: This is not a host name." in errors
    assert not any(error.startswith("Line 3") for error in errors)  # another host: its own row
    assert not Override.objects.exists()


def test_a_bad_row_refuses_the_whole_file_and_every_error_names_its_line(
    manager: Client,
) -> None:
    Override.objects.create(location="/kept", priority=Decimal("0.1"))
    text = (
        "location,priority,exclude,lastmod\n"
        "/kept,0.5,,\n"
        "/new,7,,\n"
        "not a path,0.5,,\n"
        "/c,,maybe,\n"
        "/d,,,yesterday\n"
        "/e,,,\n"
        "https://example.com/new/,0.2,,\n"
    )
    response = _upload(manager, OVERRIDE_IMPORT, text)
    assert response.status_code == 200
    errors = [str(error) for error in response.context["errors"]]
    assert errors[0] == "Line 3: priority: Priority must be between 0.0 and 1.0."
    assert any(error.startswith("Line 4: location:") for error in errors)
    assert "Line 5: exclude: Enter true or false." in errors
    assert any(error.startswith("Line 6: lastmod:") for error in errors)
    assert any(error.startswith("Line 7: Set at least one") for error in errors)
    assert "Line 8: location: the location and host of line 3 again" in errors
    assert b"Nothing was saved." in response.content
    # Nothing half imported: the valid rows were not written either.
    assert list(Override.objects.values_list("location", "priority")) == [
        ("/kept", Decimal("0.1"))
    ]


def test_an_import_updates_the_override_of_a_location(manager: Client) -> None:
    Override.objects.create(location="/kept", priority=Decimal("0.1"))
    response = _upload(manager, OVERRIDE_IMPORT, "location,priority\nhttps://x.org/kept/,0.7\n")
    assert response.status_code == 302
    assert list(Override.objects.values_list("location", "priority")) == [
        ("/kept", Decimal("0.7"))
    ]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"\xff\xfe/a", "The file is not UTF-8 text."),
        ("path,priority\n/a,0.5\n", "Line 1: The first line must name the columns"),
        ("location,priority\n/a,0.5,extra\n", "Line 2: This line has more cells"),
        ("location,priority\n", "The file holds no row."),
    ],
)
def test_a_file_that_is_no_override_csv_is_refused(
    manager: Client, data: str | bytes, error: str
) -> None:
    response = _upload(manager, OVERRIDE_IMPORT, data)
    assert response.status_code == 200
    assert str(response.context["errors"][0]).startswith(error)
    assert not Override.objects.exists()


def test_rules_import_creates_updates_by_id_and_checks_sections(manager: Client) -> None:
    rule = Rule.objects.create(pattern="/old/", exclude=True)
    text = (
        "id,matching,pattern,section,position,exclude,priority\n"
        f"{rule.pk},prefix,/tag/,article,5,true,\n"
        ",glob,/products/*,,100,,0.8\n"
    )
    assert _upload(manager, RULE_IMPORT, text).status_code == 302
    rules = list(Rule.objects.values_list("pk", "pattern", "section", "priority"))
    assert rules == [
        (rule.pk, "/tag/", "article", None),
        (rule.pk + 1, "/products/*", "", Decimal("0.8")),
    ]
    bad = "id,matching,pattern,section,exclude\n999,prefix,/a/,,true\n,prefix,/b/,nope,true\n"
    response = _upload(manager, RULE_IMPORT, bad)
    assert [str(error) for error in response.context["errors"]] == [
        "Line 2: id: No rule has this id: leave it empty to create one.",
        "Line 3: section: no registered section is named nope",
    ]
    assert Rule.objects.count() == 2


def test_rules_export(manager: Client) -> None:
    Rule.objects.create(matching="glob", pattern="/a/*", host="example.com", exclude=True)
    lines = _download(manager, RULE_EXPORT).splitlines()
    assert (
        lines[0]
        == "id,matching,pattern,host,section,position,exclude,lastmod,changefreq,priority,note"
    )
    assert lines[1].endswith(",glob,/a/*,example.com,,100,true,,,,")


def test_who_may_only_view_exports_but_may_not_import() -> None:
    viewer = staff_client("view_override")
    assert viewer.get(OVERRIDE_EXPORT).status_code == 200
    assert viewer.get(OVERRIDE_IMPORT).status_code == 403
    assert _upload(viewer, OVERRIDE_IMPORT, "location,exclude\n/a,true\n").status_code == 403
    assert not Override.objects.exists()
    assert staff_client().get(OVERRIDE_EXPORT).status_code == 403
