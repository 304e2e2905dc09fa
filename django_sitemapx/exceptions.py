"""Exceptions raised by django-sitemapx."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


class AlreadyRegistered(Exception):
    """A section name is registered twice."""


class NotRegistered(Exception):
    """A section or model is not in the registry."""


class SourceConfigurationError(ImproperlyConfigured):
    """A source declares something the protocol or the app cannot serve."""


class InvalidValue(ValueError):
    """A value cannot be written to a sitemap (bad priority, changefreq or date)."""


class ExportError(Exception):
    """An export cannot run as asked (bad argument, destination not writable, ...)."""
