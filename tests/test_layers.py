"""The package's import layers, as users meet them (import-linter checks the rest)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_package_loads_neither_the_http_stack_nor_models() -> None:
    # A fresh interpreter: this one has imported everything already.
    code = (
        "import sys, django_sitemapx; "
        "print(sorted(m for m in sys.modules if m.startswith('django_sitemapx')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = eval(out)  # a list of module names printed by the child
    assert "django_sitemapx.invalidation" in loaded
    for module in ("serving", "views", "documents", "models", "admin", "export"):
        assert not any(
            name == f"django_sitemapx.{module}" or name.startswith(f"django_sitemapx.{module}.")
            for name in loaded
        ), module
