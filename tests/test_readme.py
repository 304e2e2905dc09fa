"""The README is also the PyPI page: its links must work there, so none is relative."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _repository() -> str:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    return str(urls["Source"]).rstrip("/")


def test_every_readme_link_is_absolute() -> None:
    targets = LINK.findall(README)
    assert targets
    assert [target for target in targets if not target.startswith("https://")] == []


def test_readme_links_into_the_repository_name_files_that_exist() -> None:
    prefix = f"{_repository()}/blob/main/"
    inside = [target for target in LINK.findall(README) if target.startswith(prefix)]
    assert inside, "the README links to the docs in the repository"
    missing = [
        target
        for target in inside
        if not (ROOT / target.removeprefix(prefix).split("#")[0]).is_file()
    ]
    assert missing == []
