"""The checks as ``manage.py check`` runs them: registered, together, and at start-up."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

import django_sitemapx as sitemapx
from django_sitemapx.registry import SitemapRegistry
from tests.conftest import ROOT
from tests.support.checks import check_errors


def test_a_clean_configuration_passes_with_no_message() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command("check", fail_level="WARNING", stdout=stdout, stderr=stderr)
    assert stderr.getvalue() == ""
    assert stdout.getvalue().startswith("System check identified no issues")


def test_the_checks_are_registered() -> None:
    # No call of a check function here: the command itself must run them.
    with override_settings(SITEMAPX_PROTOCOL="ftp"):
        assert check_errors() == ["E002"]


def test_settings_and_sources_are_reported_together(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["no-such-page"])
    with override_settings(SITEMAPX_LIMIT=0):
        assert check_errors() == ["E001", "E102"]


@pytest.mark.parametrize(("setting", "number"), [("SITEMAPX_LIMIT = 0", "E001")])
def test_a_bad_setting_is_reported_by_manage_py_check_not_a_traceback(
    tmp_path: Path, setting: str, number: str
) -> None:
    # Start-up runs autodiscovery, and registration, before any check: neither may
    # read a setting in a way that fails there.
    (tmp_path / "bad_settings.py").write_text(f"from tests.settings import *\n{setting}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "django", "check", "--settings", "bad_settings"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert f"django_sitemapx.{number}" in done.stderr
    assert "Traceback" not in done.stderr
