"""overrides_changed: what a cache must drop after an override changes."""

import pytest
from django.core.management import call_command

from django_sitemapx.models import Override
from django_sitemapx.signals import affected_documents, overrides_changed

pytestmark = pytest.mark.django_db


@pytest.fixture
def received():  # type: ignore[no-untyped-def]
    calls: list[dict[str, object]] = []

    def receiver(sender: object, **kwargs: object) -> None:
        calls.append({"sender": sender, **kwargs})

    overrides_changed.connect(receiver)
    yield calls
    overrides_changed.disconnect(receiver)


def test_create_change_and_delete_notify_after_commit(
    received,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location="/a/", exclude=True, section="s", page=2)
        assert received == []  # nothing before the commit
    assert received[-1]["sender"] is Override
    assert received[-1]["pages"] == frozenset({("s", 2)})
    assert received[-1]["locations"] == frozenset({"/a"})
    assert received[-1]["everything"] is False

    override = Override.objects.get(pk=override.pk)
    override.location, override.section, override.page = "/b", "t", 1
    with django_capture_on_commit_callbacks(execute=True):
        override.save()
    # The old page and location are affected as well as the new ones.
    assert received[-1]["pages"] == frozenset({("s", 2), ("t", 1)})
    assert received[-1]["locations"] == frozenset({"/a", "/b"})

    with django_capture_on_commit_callbacks(execute=True):
        override.delete()
    assert received[-1]["pages"] == frozenset({("t", 1)})


def test_an_unplaced_override_affects_everything(
    received,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location="/nowhere", exclude=True)
    assert received[-1]["everything"] is True


def test_affected_documents() -> None:
    affected = affected_documents([("/a", [("s", 1), None]), ("/b", [("s", 3), ("s", 1)])])
    assert affected.pages == frozenset({("s", 1), ("s", 3)})
    assert affected.locations == frozenset({"/a", "/b"})
    assert not affected.everything and affected.index


def test_migrations_are_complete() -> None:
    call_command("makemigrations", "django_sitemapx", "--check", "--dry-run", verbosity=0)
