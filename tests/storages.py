"""Storages for export tests: a remote-like one with no local path."""

from __future__ import annotations

from django.core.files.storage import InMemoryStorage


class OverwritingMemoryStorage(InMemoryStorage):
    """Replaces a file saved under an existing name, like S3 with ``file_overwrite``."""

    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        return name
