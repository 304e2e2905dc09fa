"""Serving exported files from a storage instead of generating the documents.

With ``SITEMAPX_SERVE_FROM_STORAGE = "alias"`` the views answer from the files
``sitemap_export`` wrote to that storage: for read-only or multi-server
deployments where one process exports and every web process serves the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import IO, Any

from asgiref.sync import sync_to_async
from django.core.files.storage import Storage, storages
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, Http404, HttpRequest, StreamingHttpResponse
from django.utils.http import http_date

from ..conf import app_settings
from ..documents import index_path
from ..locations.hosts import canonical_host, host_folder
from ..locations.origins import is_served_host, origin_for_request, uses_sites_framework
from ..registry import default_registry

CHUNK_BYTES = 64 * 1024


def exported_file_response(request: HttpRequest, content_type: str) -> StreamingHttpResponse:
    """The exported file named like the request's path, or 404."""
    alias = app_settings.SERVE_FROM_STORAGE
    assert alias is not None
    storage = storages[alias]
    name = request.path_info.lstrip("/")
    # An export of every site (sitemap_export --all-sites) puts each host's files in
    # a folder of its own, index included; a one-site export, at the top. Only a
    # served host's folder is looked at: the Host header must not pick any folder
    # of the storage that happens to hold a sitemap.xml (the media of a shared one).
    host = origin_for_request(request).host
    if _is_exported_host(host):
        folder = host_folder(host)
        if storage.exists(f"{folder}/{index_path().lstrip('/')}"):
            name = f"{folder}/{name}"
    try:
        handle = storage.open(name, "rb")
    except (OSError, ValueError):
        # Not found, a directory, a name too long for the file system (ENAMETOOLONG),
        # a NUL byte: whatever the visitor typed, the answer is that no such file exists.
        raise Http404("No such exported sitemap file; run sitemap_export.") from None
    response: StreamingHttpResponse
    if isinstance(request, ASGIRequest):
        # FileResponse would read the whole file into memory under ASGI.
        response = StreamingHttpResponse(_async_chunks(handle), content_type=content_type)
        with contextlib.suppress(OSError, NotImplementedError):
            response["Content-Length"] = str(storage.size(name))
    else:
        response = FileResponse(handle, content_type=content_type)
    _last_modified(response, storage, name)
    return response


def _is_exported_host(host: str) -> bool:
    """Whether ``sitemap_export --all-sites`` may have written a folder for ``host``.

    With the Sites framework the origin's host is a site's domain already.
    Otherwise it is the request's ``Host``, which ``ALLOWED_HOSTS`` may let a client
    choose: it must be a served host (``SITEMAPX_HOSTS``, or the exact names of
    ``ALLOWED_HOSTS``) or a host a section's ``sites`` names.
    """
    if uses_sites_framework():
        return True
    if is_served_host(host):
        return True
    return canonical_host(host) in {canonical_host(name) for name in default_registry.site_hosts()}


def _last_modified(response: StreamingHttpResponse, storage: Storage, name: str) -> None:
    try:
        modified = storage.get_modified_time(name)
    except (NotImplementedError, OSError):
        return
    response["Last-Modified"] = http_date(modified.timestamp())


async def _async_chunks(handle: IO[Any]) -> AsyncIterator[bytes]:
    read = sync_to_async(handle.read, thread_sensitive=False)
    try:
        while chunk := await read(CHUNK_BYTES):
            yield chunk
    finally:
        await sync_to_async(handle.close, thread_sensitive=False)()
