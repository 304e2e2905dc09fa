"""The Tasks framework comes from Django 6 when it has it, else from the django-tasks backport."""

from __future__ import annotations

import django
import pytest
from django.core.exceptions import ImproperlyConfigured

from django_sitemapx import compat


def test_django_6_uses_its_own_and_5_2_the_backport() -> None:
    module = compat.tasks_module()

    assert module is not None
    expected = "django.tasks" if django.VERSION >= (6, 0) else "django_tasks"
    assert module.__name__ == expected
    # The names this app uses exist in both.
    assert callable(module.task)
    assert module.task_backends is not None


def test_the_aliases_and_backend_of_tasks(settings) -> None:  # type: ignore[no-untyped-def]
    name = compat.require_tasks_module().__name__
    settings.TASKS = {"q": {"BACKEND": f"{name}.backends.dummy.DummyBackend"}}

    assert compat.backend_aliases() == ["q"]
    assert compat.backend_class_path("q") == f"{name}.backends.dummy.DummyBackend"


def test_without_any_framework_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compat, "TASKS_MODULES", ("no_such_tasks_module",))

    assert compat.tasks_module() is None
    with pytest.raises(ImproperlyConfigured, match=r"django-sitemapx\[tasks\]"):
        compat.require_tasks_module()
