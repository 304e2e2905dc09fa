"""The contributors' map (docs/contributing/architecture.md) against the code and the contract.

Its layer list must be the one import-linter checks (``pyproject.toml``), and its
module tree must name every module of the package once, so neither can drift from
the code again.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from tests.conftest import ROOT

PAGE = (ROOT / "docs" / "contributing" / "architecture.md").read_text()
PACKAGE = ROOT / "django_sitemapx"
# A line of the module tree that names a module or a package (the rest continue a description).
TREE_ENTRY = re.compile(r"^(?P<indent> *)(?P<name>\S+(?:\.py|/))(?:\s|$)")


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts: list[dict[str, Any]] = config["contracts"]
    return contracts


def _layers_contract() -> dict[str, Any]:
    [contract] = [contract for contract in _contracts() if contract["type"] == "layers"]
    return contract


def _code_block_after(heading: str) -> list[str]:
    """The lines of the first fenced code block under ``heading``."""
    section = PAGE.split(f"\n{heading}\n", 1)[1]
    block = re.search(r"^```[a-z]*\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert block is not None, f"no code block under {heading!r}"
    return block.group(1).splitlines()


def _normal(layer: str) -> str:
    return " | ".join(part.strip() for part in layer.split("|"))


def test_the_page_lists_the_layers_import_linter_checks() -> None:
    on_page = [line for line in _code_block_after("## Which way the arrows point") if line]
    in_contract = _layers_contract()["layers"]
    assert on_page == in_contract
    assert [_normal(layer) for layer in in_contract] == in_contract  # one spelling


def test_the_page_names_every_ignored_import() -> None:
    ignored = {rule for contract in _contracts() for rule in contract.get("ignore_imports", [])}
    assert ignored
    assert [rule for rule in sorted(ignored) if f"`{rule}`" not in PAGE] == []


def test_every_module_of_the_package_has_a_layer() -> None:
    layered = {name.strip() for layer in _layers_contract()["layers"] for name in layer.split("|")}
    modules = {path.stem for path in PACKAGE.glob("*.py") if path.name != "__init__.py"}
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    top_level = modules | packages
    assert top_level - {"migrations"} == layered


def _tree_modules() -> list[str]:
    """Every module the page's tree names, as a path inside the package."""
    lines = _code_block_after("## The modules")
    assert lines[0] == "django_sitemapx/"
    folders: list[tuple[int, str]] = []  # (indent, path) of the enclosing packages
    modules = []
    for line in lines[1:]:
        entry = TREE_ENTRY.match(line)
        if entry is None:
            continue  # a description carried over from the line above
        indent, name = len(entry["indent"]), entry["name"]
        while folders and folders[-1][0] >= indent:
            folders.pop()
        path = "".join(folder for _indent, folder in folders) + name
        if name.endswith("/"):
            folders.append((indent, name))
        else:
            modules.append(path)
    return modules


def test_the_module_tree_names_each_module_once() -> None:
    named = _tree_modules()
    assert sorted(name for name in set(named) if named.count(name) > 1) == []
    in_package = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "migrations" not in path.parts
        # An empty __init__.py only makes a folder a package: the tree shows the folder.
        and not (path.name == "__init__.py" and not path.read_text().strip())
    }
    assert set(named) == in_package
