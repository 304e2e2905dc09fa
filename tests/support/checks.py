"""Running ``manage.py check`` as a project would, and reading the IDs it reports.

Each check test sets one bad value and runs ``call_command("check")``: an error
must make it fail naming the ID, a warning must be printed without failing. That
is also the proof that the checks are registered at all.
"""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

ID = re.compile(r"\(django_sitemapx\.([EW]\d{3})\)")


def check_errors() -> list[str]:
    """The django-sitemapx IDs reported by a ``check`` that must fail."""
    with pytest.raises(SystemCheckError) as info:
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    return sorted(ID.findall(str(info.value)))


def check_warnings() -> list[str]:
    """The django-sitemapx IDs printed by a ``check`` that must pass (warnings only)."""
    stderr = io.StringIO()
    call_command("check", stdout=io.StringIO(), stderr=stderr)
    return sorted(ID.findall(stderr.getvalue()))


def failing_check_output() -> str:
    """What a ``check`` that must fail reports."""
    with pytest.raises(SystemCheckError) as info:
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    return str(info.value)
