"""Storages for export tests: a remote-like one with no local path."""

from __future__ import annotations

from typing import Any

from django.core.files.storage import InMemoryStorage


class OverwritingMemoryStorage(InMemoryStorage):
    """Replaces a file saved under an existing name, like S3 with ``file_overwrite``."""

    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        return name

    def _save(self, name: str, content: Any) -> str:
        # InMemoryStorage writes over an existing file without truncating it (it
        # never replaces one): a shorter document would keep the old one's tail.
        self.delete(name)
        return str(super()._save(name, content))
