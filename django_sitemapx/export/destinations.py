"""Where an export writes: a local folder or any Django storage, atomically per file.

Every document is first written in full to a staging file; ``commit`` then puts
it in place in one step (``os.replace`` in a folder, one upload to a storage,
which S3, GCS and Azure make visible only once complete). Until ``commit`` the
destination is untouched, so readers keep seeing the previous export.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from django.core.files import File
from django.core.files.storage import (
    FileSystemStorage,
    InvalidStorageError,
    Storage,
    storages,
)

from ..exceptions import ExportError

logger = logging.getLogger("django_sitemapx")

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

# Lists the files the last export wrote, so the next one removes only its own stale files.
MANIFEST_NAME = ".sitemapx-manifest.json"
LOCK_NAME = ".sitemapx-export.lock"
TEMP_SUFFIX = ".sitemapx-tmp"


class StagedFile:
    """A document being written under a temporary path, to be committed as ``name``."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path

    def discard(self) -> None:
        """Remove the staging file (after a failure or once committed by copying)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class Destination:
    """Base of export destinations; names are ``/``-separated and relative to its root."""

    description = ""

    def validate(self, *, dry_run: bool) -> None:
        """Raise ``ExportError`` if the export cannot write here; never writes when ``dry_run``."""

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Held for a whole export; refuses a second export to the same place."""
        yield

    def clean_leftovers(self, names: list[str]) -> None:
        """Remove staging files a killed export left behind next to ``names``."""

    def stage(self, name: str) -> StagedFile:
        """A new staging file for the document ``name``."""
        raise NotImplementedError

    def subfolder(self, name: str) -> Destination:
        """The destination of the folder ``name`` inside this one (one site's files)."""
        raise NotImplementedError

    def commit(self, staged: StagedFile) -> None:
        """Put a complete staging file in place under its name, in one step."""
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        raise NotImplementedError

    def delete(self, name: str) -> None:
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes | None:
        raise NotImplementedError

    def read_manifest(self) -> dict[str, str]:
        """File name to section (``""`` for the index) of the previous export."""
        data = self.read_bytes(MANIFEST_NAME)
        if data is None:
            return {}
        try:
            files = json.loads(data)["files"]
        except (ValueError, KeyError, TypeError):
            return {}
        if not isinstance(files, dict):
            return {}
        return {str(name): str(section) for name, section in files.items()}

    def write_manifest(self, files: dict[str, str]) -> None:
        staged = self.stage(MANIFEST_NAME)
        staged.path.write_bytes(
            json.dumps({"format": 1, "files": dict(sorted(files.items()))}, indent=1).encode()
        )
        self.commit(staged)


class FolderDestination(Destination):
    """A local folder; staging files sit next to their targets, then ``os.replace``."""

    def __init__(self, root: str | os.PathLike[str], *, permissions: int | None = None) -> None:
        self.root = Path(root)
        self.permissions = permissions
        self.description = str(self.root)

    def subfolder(self, name: str) -> Destination:
        return FolderDestination(self.root / name, permissions=self.permissions)

    def validate(self, *, dry_run: bool) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise ExportError(f"{self.root} exists and is not a folder.")
        existing = self.root
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir():
            raise ExportError(f"{self.root} cannot be created: {existing} is not a folder.")
        if dry_run:
            if not os.access(existing, os.W_OK | os.X_OK):
                raise ExportError(f"{existing} is not writable.")
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # A real write is the only sure test (read-only mounts, root in a container).
            with tempfile.TemporaryFile(dir=self.root):
                pass
        except OSError as error:
            raise ExportError(f"Cannot write to {self.root}: {error.strerror or error}.") from None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        if fcntl is None:  # pragma: no cover
            yield
            return
        with open(self.root / LOCK_NAME, "a+b") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ExportError(f"Another export to {self.root} is running.") from None
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def clean_leftovers(self, names: list[str]) -> None:
        # Only called under the lock, so no other export owns these files.
        folders = {(self.root / name).parent for name in [*names, MANIFEST_NAME]}
        for folder in folders:
            if folder.is_dir():
                for path in folder.glob(f".*{TEMP_SUFFIX}"):
                    path.unlink(missing_ok=True)

    def stage(self, name: str) -> StagedFile:
        target = self.root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        path = target.with_name(f".{target.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
        # Created like any new file (0o666 less the umask), so a web server can read it;
        # tempfile would make it private (0o600).
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        return StagedFile(name, path)

    def commit(self, staged: StagedFile) -> None:
        with open(staged.path, "rb") as handle:
            os.fsync(handle.fileno())
        if self.permissions is not None:
            os.chmod(staged.path, self.permissions)
        os.replace(staged.path, self.root / staged.name)

    def exists(self, name: str) -> bool:
        return (self.root / name).is_file()

    def delete(self, name: str) -> None:
        (self.root / name).unlink(missing_ok=True)

    def read_bytes(self, name: str) -> bytes | None:
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None


class StorageDestination(Destination):
    """Any Django storage: documents are staged on local disk, then uploaded whole."""

    def __init__(self, storage: Storage, *, alias: str = "", folder: str = "") -> None:
        self.storage = storage
        self.alias = alias
        # Names are relative to this folder of the storage ("" for its root).
        self.folder = folder.strip("/")
        where = f"storage {alias!r}" if alias else repr(storage)
        self.description = f"{where}, folder {self.folder}" if self.folder else where
        self._staging: Path | None = None

    def subfolder(self, name: str) -> Destination:
        return StorageDestination(self.storage, alias=self.alias, folder=self._name(name))

    def _name(self, name: str) -> str:
        return f"{self.folder}/{name}" if self.folder else name

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        self._staging = Path(tempfile.mkdtemp(prefix="sitemapx-export-"))
        try:
            yield
        finally:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def stage(self, name: str) -> StagedFile:
        if self._staging is None:
            raise RuntimeError("StorageDestination.stage() outside lock()")
        fd, path = tempfile.mkstemp(dir=self._staging, suffix=TEMP_SUFFIX)
        os.close(fd)
        return StagedFile(name, Path(path))

    def commit(self, staged: StagedFile) -> None:
        name = self._name(staged.name)
        if self.storage.exists(name) and self.storage.get_available_name(name) != name:
            # This storage saves under a new name rather than replace: remove the old
            # file first, so the name is briefly missing (S3 and GCS overwrite by default).
            logger.warning(
                "%s does not overwrite files: %s is missing while it is replaced; enable "
                "overwriting (file_overwrite / allow_overwrite, depending on the backend).",
                self.description,
                name,
            )
            self.storage.delete(name)
        with open(staged.path, "rb") as handle:
            saved = self.storage.save(name, File(handle, name=name))
        staged.discard()
        if saved != name:
            self.storage.delete(saved)
            raise ExportError(
                f"{self.description} saved {name} as {saved}; enable overwriting "
                "(file_overwrite / allow_overwrite, depending on the backend)."
            )

    def exists(self, name: str) -> bool:
        return self.storage.exists(self._name(name))

    def delete(self, name: str) -> None:
        self.storage.delete(self._name(name))

    def read_bytes(self, name: str) -> bytes | None:
        name = self._name(name)
        if not self.storage.exists(name):
            return None
        with self.storage.open(name, "rb") as handle:
            data = handle.read()
        return data if isinstance(data, bytes) else str(data).encode()


def storage_destination(alias: str) -> Destination:
    """The destination for a ``STORAGES`` alias; a local file system storage becomes a folder.

    A ``FileSystemStorage`` is written by ``os.replace``, which is atomic; any
    other storage by one upload per file.
    """
    try:
        storage = storages[alias]
    except InvalidStorageError:
        known = ", ".join(sorted(storages.backends)) or "none"
        raise ExportError(f"No storage {alias!r} in STORAGES (known: {known}).") from None
    if not isinstance(storage, FileSystemStorage):
        return StorageDestination(storage, alias=alias)
    root = storage.path("")
    permissions = getattr(storage, "file_permissions_mode", None)
    destination = FolderDestination(root, permissions=permissions)
    destination.description = f"storage {alias!r} ({root})"
    return destination
