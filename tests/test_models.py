"""The override model: normalised, validated in Python and by the database."""

import datetime
from decimal import Decimal

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_sitemapx import models
from django_sitemapx.models import ChangedKey, Override, PageState

pytestmark = pytest.mark.django_db


def test_location_is_saved_normalised() -> None:
    override = Override.objects.create(location="https://example.com/about/", priority="0.3")
    override.refresh_from_db()
    assert override.location == "/about"
    assert str(override) == "/about"


def test_three_forms_of_one_url_are_one_row() -> None:
    Override.objects.create(location="/a/", exclude=True)
    for value in ("/a", "https://example.com/a/"):
        duplicate = Override(location=value, exclude=True)
        with pytest.raises(ValidationError) as error:
            duplicate.full_clean()
        assert "already exists" in str(error.value.message_dict["location"])
        with pytest.raises(IntegrityError), transaction.atomic():
            duplicate.save()


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"priority": Decimal("7")}, "priority", "between 0.0 and 1.0"),
        ({"priority": Decimal("-0.1")}, "priority", "between 0.0 and 1.0"),
        ({"priority": Decimal("0.55")}, "priority", "decimal place"),
        ({"changefreq": "sometimes"}, "changefreq", "not a valid choice"),
        ({"location": "ftp://x/a", "exclude": True}, "location", "http"),
        ({"location": "about", "exclude": True}, "location", "starting with /"),
    ],
)
def test_invalid_values_are_refused_with_a_clear_message(
    fields: dict[str, object], field: str, message: str
) -> None:
    override = Override(**{"location": "/a", "exclude": False, **fields})
    with pytest.raises(ValidationError) as error:
        override.full_clean()
    assert message in " ".join(error.value.message_dict[field])


def test_an_override_that_changes_nothing_is_refused() -> None:
    with pytest.raises(ValidationError, match="at least one"):
        Override(location="/a").full_clean()
    with pytest.raises(IntegrityError), transaction.atomic():
        Override.objects.create(location="/a")


def test_a_future_lastmod_is_refused() -> None:
    override = Override(location="/a", lastmod=timezone.now() + datetime.timedelta(days=1))
    with pytest.raises(ValidationError) as error:
        override.full_clean()
    assert "future" in error.value.message_dict["lastmod"][0]


@pytest.mark.parametrize(
    "fields",
    [{"priority": Decimal("7")}, {"changefreq": "monthy"}, {"location": "a", "exclude": True}],
)
def test_the_database_refuses_what_validation_would(fields: dict[str, object]) -> None:
    values = {"location": "/a", "exclude": True, **fields}
    with pytest.raises(IntegrityError), transaction.atomic():
        # bulk_create() skips save() and validation: only the constraints stand guard.
        Override.objects.bulk_create([Override(**values)])


def test_valid_override_passes_validation() -> None:
    override = Override(
        location="/a/",
        priority=Decimal("0.8"),
        changefreq="daily",
        lastmod=timezone.now() - datetime.timedelta(hours=1),
    )
    override.full_clean()
    assert override.location == "/a"


def test_locations_are_unique_by_their_digest() -> None:
    from django_sitemapx.models import location_hash

    first = Override.objects.create(location="/a/", exclude=True)
    assert first.location_hash == location_hash("/a")
    with pytest.raises(ValidationError) as error:
        Override(location="https://example.com/a", exclude=True).full_clean()
    assert "already exists" in error.value.message_dict["location"][0]
    first.full_clean()  # itself is no duplicate
    with pytest.raises(IntegrityError), transaction.atomic():
        Override.objects.create(location="/a", priority=Decimal("0.5"))
    long = "/" + "x" * 2040
    assert len(Override.objects.create(location=long, exclude=True).location_hash) == 64


def test_an_override_of_one_host_is_unique_per_host_and_location() -> None:
    import hashlib

    from django_sitemapx.models import location_hash

    every_host = Override.objects.create(location="/a/", exclude=True)
    # A host-less override's digest is its location's alone, as before hosts: rows
    # stored before keep theirs, no data migration.
    assert every_host.location_hash == hashlib.sha256(b"/a").hexdigest()
    one_host = Override(location="https://b.example/a", host="B.Example.", exclude=True)
    one_host.full_clean()  # another host: no duplicate of the host-less one
    assert one_host.host == "b.example"  # canonical, as Rule.host
    one_host.save()
    assert one_host.location_hash == location_hash("/a", "b.example") != every_host.location_hash
    assert str(one_host) == "b.example/a"
    with pytest.raises(ValidationError) as error:
        Override(location="/a", host="b.example", priority=Decimal("0.1")).full_clean()
    assert "on this host already exists" in error.value.message_dict["location"][0]
    with pytest.raises(IntegrityError), transaction.atomic():
        Override.objects.create(location="/a", host="b.example", priority=Decimal("0.5"))
    ported = Override(location="/a", host="b.example:8000", exclude=True)
    ported.full_clean()  # a port is part of the host
    assert ported.host == "b.example:8000"
    with pytest.raises(ValidationError) as error:
        Override(location="/a", host="no host!", exclude=True).full_clean()
    assert error.value.message_dict["host"] == ["This is not a host name."]
    # Saved without clean() (a script, a fixture), the host is canonical all the same.
    scripted = Override.objects.create(location="/s", host="Example.COM.", exclude=True)
    assert scripted.host == "example.com"
    assert scripted.location_hash == location_hash("/s", "example.com")
    # A change of host alone moves the digest too.
    one_host.host = "c.example"
    one_host.save(update_fields=["host"])
    one_host.refresh_from_db()
    assert one_host.location_hash == location_hash("/a", "c.example")


def test_the_migration_fills_the_digest_of_existing_rows(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:

    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from django_sitemapx.models import location_hash

    executor = MigrationExecutor(connection)
    executor.migrate([("django_sitemapx", "0001_initial")])
    old = executor.loader.project_state([("django_sitemapx", "0001_initial")]).apps
    old.get_model("django_sitemapx", "Override").objects.create(location="/kept", exclude=True)
    call_command("migrate", "django_sitemapx", verbosity=0)
    kept = Override.objects.get(location="/kept")
    assert kept.location_hash == location_hash("/kept")


def test_table_exists_looks_a_table_up_until_it_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "_FOUND_TABLES", set())
    with CaptureQueriesContext(connection) as lookups:
        assert models.table_exists(PageState, DEFAULT_DB_ALIAS)
        assert models.table_exists(PageState, DEFAULT_DB_ALIAS)
    assert len(lookups) == 1  # found once, then remembered
    with CaptureQueriesContext(connection) as lookups:
        assert models.table_exists(ChangedKey, DEFAULT_DB_ALIAS)  # this app's: found with it
        assert models.table_exists(ContentType, DEFAULT_DB_ALIAS)
        assert models.table_exists(ContentType, DEFAULT_DB_ALIAS)
    assert len(lookups) == 1  # another app's (Wagtail's Site): found once too
    monkeypatch.setattr(PageState._meta, "db_table", "django_sitemapx_not_migrated")
    with CaptureQueriesContext(connection) as lookups:
        assert not models.table_exists(PageState, DEFAULT_DB_ALIAS)
        assert not models.table_exists(PageState, DEFAULT_DB_ALIAS)
    assert len(lookups) == 2  # a missing table is looked for again: migrate may run
