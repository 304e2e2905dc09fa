"""The steps ``export_incremental.py`` and ``export_memory.py`` run in fresh processes.

Each is Python source run with ``python -c`` after ``django.setup()``; it sets
``out``, the step's figures. They import nothing from ``benchmarks`` in the child,
so that ``export_memory.py --code`` can run them against another checkout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_step(script: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``script`` with ``python -c`` in ``cwd``; the JSON object its last line prints.

    Exits with the step's error output when it fails.
    """
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"The step failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# The export into ``folder``: its result's figures, the process's CPU seconds (Django's
# start included) and its PostgreSQL backend's. The system checks run first, as
# ``manage.py sitemap_export`` runs them before it exports: they import the URLconf,
# which the export's first ``reverse()`` would otherwise import inside its own time
# (in the full runs and the incremental ones alike).
EXPORT = """
import os
from django.core import checks
from django.db import connection
checks.run_checks()
from django_sitemapx.export import FolderDestination, export_sitemap, origin_from_url
r = export_sitemap(FolderDestination({folder!r}), origin=origin_from_url({base!r}), full={full})
out = {{'written': len(r.files), 'unchanged': len(r.unchanged), 'proven': r.proven,
        'spliced': getattr(r, 'spliced', None), 'told': getattr(r, 'told', None),
        'urls': r.urls, 'export_seconds': round(r.seconds, 2)}}
with connection.cursor() as cursor:
    cursor.execute('SELECT pg_backend_pid()')
    pid = cursor.fetchone()[0]
stat = open(f'/proc/{{pid}}/stat').read().rsplit(')', 1)[1].split()
out['cpu_seconds'] = round(sum(os.times()[:2]), 2)
out['database_cpu_seconds'] = round((int(stat[11]) + int(stat[12])) / os.sysconf('SC_CLK_TCK'), 2)
"""

# ``changes`` published rows (n not a multiple of 10) saved through the ORM: spread
# evenly over the table (every page changes), or the newest in a row (one or two pages).
# Spread, save ``turn`` (0, 1, 2...) starts at a new place in each interval: the rows of
# the run before are not saved again (their blocks were written by that run, and are
# still in its files' cache, which rows saved at new places do not find). Turn 0 starts
# halfway, as the benchmark did before it had turns.
# The title gets one " (edited)" however many runs edit it, so that reruns on the
# same data keep it under its field's 255 characters.
SAVE = """
from django.utils import timezone
from example_project.articles.models import Article
if {spread}:
    step = max({rows} // {changes}, 1)
    start = step // 2 + 1
    if {turn} and step > 2:
        # The golden ratio's multiples modulo 1: each turn far from the turns before.
        start = int(({turn} * 0.6180339887) % 1 * (step - 2)) + 1
        start += start % 10 == 0
    ids = list(range(start, {rows} + 1, step))[:{changes}]
else:
    ids = [n for n in range({rows} - {changes} * 2, {rows} + 1) if n % 10][-{changes}:]
for article in Article.objects.filter(id__in=ids):
    article.title = article.title.removesuffix(' (edited)') + ' (edited)'
    article.updated_at = timezone.now()
    article.save()
out = {{'saved': len(ids)}}
"""
