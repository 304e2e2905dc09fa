"""Serving exported files from a storage instead of generating the documents.

With ``SITEMAPX_SERVE_FROM_STORAGE = "alias"`` the views answer from the files
``sitemap_export`` wrote to that storage: for read-only or multi-server
deployments where one process exports and every web process serves the result.
"""

from __future__ import annotations

from django.core.files.storage import storages
from django.http import FileResponse, Http404
from django.utils.http import http_date

from .conf import app_settings


def stored_response(path: str, content_type: str) -> FileResponse:
    """The stored file at URL path ``path`` (its name in the storage), or 404."""
    storage = storages[app_settings.SERVE_FROM_STORAGE]
    name = path.lstrip("/")
    try:
        handle = storage.open(name, "rb")
    except (FileNotFoundError, IsADirectoryError):
        raise Http404(f"No exported file {name!r}; run sitemap_export.") from None
    response = FileResponse(handle, content_type=content_type)
    try:
        modified = storage.get_modified_time(name)
    except (NotImplementedError, OSError):
        return response
    response["Last-Modified"] = http_date(modified.timestamp())
    return response
