"""The checks of the XML's stylesheet and the audit task (``checks/people.py``), E601-E602."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from tests.support.checks import check_errors


@pytest.mark.parametrize(
    "value", ["", " sitemap.css", "my sitemap.css", "x" * 1_025, "bad\x00.css", 12, b"a.css"]
)
def test_e601_stylesheet(value: object) -> None:
    with override_settings(SITEMAPX_XML_STYLESHEET=value):
        assert check_errors() == ["E601"]


@pytest.mark.parametrize(
    "value",
    [None, "django_sitemapx/sitemap.css", "/static/site.css", "https://cdn.example/s.css?v=1&x"],
)
def test_e601_accepts_a_static_name_a_path_or_a_url(value: object) -> None:
    with override_settings(SITEMAPX_XML_STYLESHEET=value):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.parametrize("alias", ["missing", 1, ""])
def test_e602_audit_task_backend(alias: object) -> None:
    with override_settings(SITEMAPX_AUDIT_TASK_BACKEND=alias):
        assert check_errors() == ["E602"]


def test_e602_is_silent_while_the_default_is_left_alone() -> None:
    with override_settings(
        TASKS={"other": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    ):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
