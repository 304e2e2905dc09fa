"""Django's Tasks framework, wherever it comes from: one import place.

Django 6 ships it as ``django.tasks``; on Django 5.2 the ``django-tasks``
backport (``pip install "django-sitemapx[tasks]"``) provides the same API as
``django_tasks``. What this app uses is the same in both: the ``task``
decorator, ``Task.using(backend=...)``, ``Task.enqueue()`` and the
``task_backends`` handler. Only the module name and the name of the unknown
backend exception differ (``InvalidTaskBackend`` in Django,
``InvalidTaskBackendError`` in the backport).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from django.core.exceptions import ImproperlyConfigured

# Django's own first: a project on Django 6 with the backport still installed
# configures django.tasks (TASKS backends named django.tasks.backends...).
TASKS_MODULES = ("django.tasks", "django_tasks")


def tasks_module() -> ModuleType | None:
    """``django.tasks``, else ``django_tasks``, else None."""
    for name in TASKS_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if name == "django_tasks":
            # The backport resets its backends on setting_changed from here (Django
            # does it in django.test.signals); importing it makes override_settings work.
            importlib.import_module("django_tasks.signals")
        return module
    return None


def require_tasks_module() -> ModuleType:
    """:func:`tasks_module`, or ``ImproperlyConfigured`` saying what to install."""
    module = tasks_module()
    if module is None:
        raise ImproperlyConfigured(
            "Django's Tasks framework is not available: use Django 6, or install the "
            'backport with pip install "django-sitemapx[tasks]".'
        )
    return module


def backend_aliases() -> list[str]:
    """The aliases of ``TASKS`` (the framework's default when the setting is absent)."""
    module = require_tasks_module()
    return list(module.task_backends.settings)


def backend_class_path(alias: str) -> str:
    """The ``BACKEND`` dotted path configured for ``alias``."""
    module = require_tasks_module()
    return str(module.task_backends.settings[alias]["BACKEND"])
