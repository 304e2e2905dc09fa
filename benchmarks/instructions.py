"""Instruction counts (Valgrind's Callgrind) of django-sitemapx against django.contrib.sitemaps.

    python benchmarks/instructions.py                         # every variant
    python benchmarks/instructions.py --json before.json      # also keep the figures
    python benchmarks/instructions.py --baseline before.json  # and compare with earlier ones
    python benchmarks/instructions.py --variants sitemapx-streamed,contrib --rows 5000
    python benchmarks/instructions.py --no-valgrind           # a quick check, wall time only

Wall-clock figures on a shared machine move by tens of percent between two runs
of the same commit; the number of instructions a fixed piece of work executes
does not. Each variant is one fixed workload, run in a fresh process under
``valgrind --tool=callgrind --instr-atstart=no``: the process sets Django up and
does the workload once unmeasured (twice for a cache hit), so imports, the
database connection, the section's page layout and every first-request cost
are paid, then switches Callgrind's instrumentation on for exactly the measured
pass and off after it. The measured pass is the index and every page of the
section it lists, requested through Django's WSGI handler (URL resolving, the
example's middleware, the view, the whole streamed body), on the benchmark's
own settings and URLs (``benchmarks/settings.py``, ``urls.py``,
``i18n_settings.py``, ``images_settings.py``) and data (``benchmarks/data.py``;
``images_bench.seed()``), each process on a fresh copy of the same SQLite file.

- ``sitemapx-streamed`` / ``contrib``: the article section with no cache;
  contrib's ``GenericSitemap`` with ``select_related`` (``/contrib/``);
- ``sitemapx-cold`` / ``contrib``: sitemapx's local-memory cache just cleared,
  so the pass builds and stores every document (contrib under ``cache_page``
  would do what ``contrib`` does and store the result: not measured apart);
- ``sitemapx-cached``: the cache on as ``run.py``'s headline runs it: the
  generations in the cache (a crawl ran before), the stored documents deleted,
  so every document is built and stored, no page counted again; and
  ``reference-cursor``, the raw-cursor yardstick of ``run.py``: a DB-API cursor
  writing the same pages (``benchmarks/references.py``; compare per URL);
- ``sitemapx-warm`` / ``contrib-cache-warm``: every document a hit of the
  local-memory cache (sitemapx's own; contrib under ``cache_page``);
- ``sitemapx-i18n`` / ``contrib-i18n``: the five-language section of
  ``i18n_bench.py`` (alternates and ``x_default``), no cache;
- ``sitemapx-images`` / ``contrib-images``: three images per article, as in
  ``images_bench.py``, no cache.

Both sides of a pair serve the same URLs, so contrib ÷ sitemapx is the ratio of
the cost per URL, measured in the same run.

Two runs of the same code count the same to within a few hundred instructions.
But where a process's stack and heap fall moves some costs (the alignment of
copies, lookups keyed by address) by up to half a percent, and any change to
the code moves them as a change of layout would. So every child runs a copy of
the checkout at a fixed path with a fixed environment (the same paths and
layouts whichever checkout or user starts it: see ``staged()``), and each
django-sitemapx variant is counted in ``--layouts`` layouts (its environment
padded to three sizes by default): the table gives the median and the range.
With ``--baseline`` a variant is "more" only when every layout now counts more
than every layout of the baseline did. Contrib's variants, the ratios'
yardstick, are counted in one layout.

The script uses no module of the package (only the URLs above), so it can be
copied into another checkout to measure that tree; compare runs made with the
same copy of this script and the same Python environment. Needs ``valgrind``
(``apt-get install valgrind``) and an x86-64 machine (the client requests are a
few bytes of machine code). One run at a time per machine (a lock waits).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import fcntl
import io
import json
import mmap
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / ".data"
# Fixed, not under $TMPDIR: every caller must see the same paths (see staged()).
STAGE = Path("/tmp/sitemapx-instructions")
HOST = "localhost"  # the one host every benchmark settings module allows
_LOC = re.compile(rb"<loc>([^<]*)</loc>")

SETTINGS = {
    "articles": "benchmarks.settings",
    "i18n": "benchmarks.i18n_settings",
    "images": "benchmarks.images_settings",
}


@dataclass(frozen=True)
class Variant:
    """One measured workload: a section's index and its pages, in a given cache state."""

    name: str
    data: str  # a key of SETTINGS: which settings module and which rows
    index: str  # the index's path
    # "off" (SITEMAPX_CACHE_ALIAS = None), "cold" (just cleared), "dropped" (the
    # stored documents deleted, the generations kept) or "warm"
    cache: str
    section: str = ""  # only the index's entries whose URL holds this
    pair: str = ""  # for a django-sitemapx variant, the contrib variant it is compared with
    what: str = ""


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "sitemapx-streamed",
            "articles",
            "/bench/sitemap.xml",
            "off",
            pair="contrib",
            what="article section, no cache",
        ),
        Variant("contrib", "articles", "/contrib/sitemap.xml", "off", what="GenericSitemap"),
        Variant(
            "sitemapx-cold",
            "articles",
            "/bench/sitemap.xml",
            "cold",
            pair="contrib",
            what="local-memory cache just cleared",
        ),
        Variant(
            "sitemapx-cached",
            "articles",
            "/bench/sitemap.xml",
            "dropped",
            pair="contrib",
            what="cache on, documents not stored yet (the headline state)",
        ),
        Variant(
            "reference-cursor",
            "articles",
            "",
            "off",
            what="raw DB-API cursor, the same XML (no index)",
        ),
        Variant(
            "sitemapx-warm",
            "articles",
            "/bench/sitemap.xml",
            "warm",
            pair="contrib-cache-warm",
            what="every document a cache hit",
        ),
        Variant(
            "contrib-cache-warm",
            "articles",
            "/contrib-cached/sitemap.xml",
            "warm",
            what="cache_page, every document a hit",
        ),
        Variant(
            "sitemapx-i18n",
            "i18n",
            "/sitemap.xml",
            "off",
            section="multilingual",
            pair="contrib-i18n",
            what="5 languages, alternates, no cache",
        ),
        Variant("contrib-i18n", "i18n", "/contrib/sitemap.xml", "off", what="i18n = True"),
        Variant(
            "sitemapx-images",
            "images",
            "/sitemap.xml",
            "off",
            pair="contrib-images",
            what="3 images per URL, no cache",
        ),
        Variant(
            "contrib-images",
            "images",
            "/contrib/sitemap.xml",
            "off",
            what="custom template, prefetch",
        ),
    )
}


# -- Callgrind's client requests -------------------------------------------------


class Callgrind:
    """Callgrind's client requests (``valgrind/callgrind.h``), made from Python.

    A client request is a marker sequence of instructions that Valgrind
    recognises and a real CPU executes as no-ops, so it needs no compiled helper:
    the few bytes below, in an executable page, called through ctypes. Outside
    Valgrind every request returns 0.
    """

    _TOOL_BASE = (ord("C") << 24) | (ord("T") << 16)
    START_INSTRUMENTATION = _TOOL_BASE + 4
    STOP_INSTRUMENTATION = _TOOL_BASE + 5
    RUNNING_ON_VALGRIND = 0x1001
    # unsigned long request(unsigned long args[6]), System V x86-64 calling convention.
    _CODE = bytes.fromhex(
        "4889f8"  # mov %rdi, %rax: the address of the request's arguments
        "31d2"  # xor %edx, %edx: the result outside Valgrind
        "48c1c703"  # rol $3, %rdi   \
        "48c1c70d"  # rol $13, %rdi   | Valgrind's marker: %rdi rotated by 128 bits,
        "48c1c73d"  # rol $61, %rdi   | so unchanged
        "48c1c733"  # rol $51, %rdi  /
        "4887db"  # xchg %rbx, %rbx: "client request", result in %rdx
        "4889d0"  # mov %rdx, %rax
        "c3"  # ret
    )

    def __init__(self) -> None:
        if platform.machine() not in ("x86_64", "AMD64"):
            raise SystemExit(
                f"the client requests are written for x86-64 only, not {platform.machine()}"
            )
        self._page = mmap.mmap(
            -1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        )
        self._page.write(self._CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p)(address)
        self._args = (ctypes.c_ulong * 6)()

    def request(self, code: int) -> int:
        self._args[0] = code
        return int(self._call(ctypes.addressof(self._args)))

    def running(self) -> bool:
        return self.request(self.RUNNING_ON_VALGRIND) > 0

    def start(self) -> None:
        self.request(self.START_INSTRUMENTATION)

    def stop(self) -> None:
        self.request(self.STOP_INSTRUMENTATION)


# -- the child process: one variant --------------------------------------------


@dataclass
class Pass:
    """What one pass over a section served."""

    documents: int = 0
    urls: int = 0
    bytes: int = 0
    failed: str = ""


class Site:
    """Requests through Django's WSGI handler in this process, every body read to its end."""

    def __init__(self) -> None:
        from django.core.handlers.wsgi import WSGIHandler

        self.handler = WSGIHandler()

    def get(self, url: str, keep: bool = False, count: bool = True) -> tuple[int, int, int, bytes]:
        """Status, URLs (if ``count``), bytes and (with ``keep``) the body of a GET of ``url``."""
        parts = urlsplit(url)
        environ: dict[str, Any] = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "SCRIPT_NAME": "",
            "SERVER_NAME": HOST,
            "SERVER_PORT": "80",
            "HTTP_HOST": HOST,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        status: list[str] = []

        def start_response(line: str, headers: Any, exc_info: Any = None) -> None:
            status.append(line)

        body = self.handler(environ, start_response)
        urls = size = 0
        kept = []
        try:
            for chunk in body:
                size += len(chunk)
                if count:
                    urls += chunk.count(b"<url>")
                if keep:
                    kept.append(chunk)
        finally:
            if hasattr(body, "close"):
                body.close()
        return int(status[0].split()[0]), urls, size, b"".join(kept)

    def crawl(self, variant: Variant, count: bool = True) -> Pass:
        """The index, then every page of the section it lists, in order.

        Without ``count`` the bodies are read but their URLs not counted: the
        measured pass leaves that out of its figures.
        """
        done = Pass()
        if not variant.index:  # a reference: its pages, no index
            from benchmarks.worker import reference_urls

            for url in reference_urls(variant.name.removeprefix("reference-")):
                status, urls, size, _ = self.get(url, count=count)
                done.documents += 1
                done.urls += urls
                done.bytes += size
                if status != 200 and not done.failed:
                    done.failed = f"{url} answered {status}"
            return done
        status, _, size, index = self.get(variant.index, keep=True)
        done.documents, done.bytes = 1, size
        if status != 200:
            done.failed = f"{variant.index} answered {status}"
            return done
        for loc in _LOC.findall(index):
            url = loc.decode().replace("&amp;", "&")
            if variant.section not in url:
                continue
            status, urls, size, _ = self.get(url, count=count)
            done.documents += 1
            done.urls += urls
            done.bytes += size
            if status != 200 and not done.failed:
                done.failed = f"{url} answered {status}"
        return done


def child(name: str, measure: bool) -> int:
    """Run one variant: the workload unmeasured, then once more between the client requests."""
    sys.path.insert(0, str(ROOT))
    import benchmarks  # noqa: F401 (measures this checkout, see benchmarks/__init__.py)

    os.chdir(ROOT)  # images_settings names its template folder relative to the checkout
    variant = VARIANTS[name]
    import django

    django.setup()
    from django.core.cache import caches
    from django.test.utils import override_settings

    import django_sitemapx

    callgrind = Callgrind() if measure else None
    if callgrind and not callgrind.running():
        raise SystemExit("not running under Valgrind")
    site = Site()
    uncached = override_settings(SITEMAPX_CACHE_ALIAS=None)
    if variant.cache == "off":
        uncached.enable()
    elif variant.cache == "dropped":
        # No per-process copies: a stored document is dropped from the cache alone.
        override_settings(SITEMAPX_CACHE_LOCAL_BYTES=0).enable()
    first = site.crawl(variant)
    if variant.cache == "warm":
        site.crawl(variant)  # the first pass filled the cache; this one takes the hit path
    elif variant.cache == "cold":
        for cache in caches.all():
            cache.clear()
    elif variant.cache == "dropped":
        # The documents evicted (or never asked for), the generations kept: every
        # document is built and stored again, no page counted again.
        backend = caches["default"]
        for key in [key for key in backend._cache if ":doc:" in key]:  # type: ignore[attr-defined]
            del backend._cache[key]  # type: ignore[attr-defined]
            backend._expire_info.pop(key, None)  # type: ignore[attr-defined]
    started = time.perf_counter()
    if callgrind:
        callgrind.start()
    done = site.crawl(variant, count=False)
    if callgrind:
        callgrind.stop()
    seconds = time.perf_counter() - started
    done.urls = first.urls  # the same documents, counted in the unmeasured pass
    if done.bytes != first.bytes and not done.failed:
        done.failed = f"the measured pass served {done.bytes} bytes, the first {first.bytes}"
    print(
        json.dumps(
            {
                **asdict(done),
                "seconds": seconds,
                "package": os.path.relpath(django_sitemapx.__file__, ROOT),
            }
        ),
        flush=True,
    )
    return 0


def prepare(data: str, rows: int) -> int:
    """Fill the SQLite file named by the environment with ``rows`` articles (no-op if there)."""
    sys.path.insert(0, str(ROOT))
    import benchmarks  # noqa: F401

    os.chdir(ROOT)
    if data == "images":
        from benchmarks.images_bench import seed

        seed(rows)
    else:
        import django

        django.setup()
        from benchmarks.data import ensure

        ensure(rows)
    return 0


# -- the parent: prepare, run, report -------------------------------------------


@contextlib.contextmanager
def staged() -> Iterator[tuple[Path, Path]]:
    """A copy of the code and a work folder, at fixed paths; one run at a time.

    The paths a process sees (its script, its modules, its database, the
    example's ``BASE_DIR``), the files beside its modules (the import system
    keeps each folder's listing) and the size of its environment place its
    stack and heap, and with them a few tenths of a percent of some counts (the
    alignment of copies, lookups keyed by address): two checkouts of the same
    commit, or one with a stray file at its top, would differ by that much. So
    every child runs a copy of just the code (``COPIED``, compiled before the
    first child, which would otherwise pay it) at ``STAGE/checkout``, on a copy
    of its database in ``STAGE/work``, with the environment ``environment()``
    builds, wherever the checkout is.
    """
    STAGE.mkdir(exist_ok=True)
    with open(STAGE / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run waits: they share the paths
        copy, work = STAGE / "checkout", STAGE / "work"
        for folder in (copy, work):
            shutil.rmtree(folder, ignore_errors=True)
        for name in COPIED:
            shutil.copytree(ROOT / name, copy / name, ignore=_NOT_COPIED)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(copy)], check=True)
        work.mkdir()
        try:
            yield copy, work
        finally:
            for folder in (copy, work):
                shutil.rmtree(folder, ignore_errors=True)


# What a child imports or reads; of it, what is not code.
COPIED = ("benchmarks", "django_sitemapx", "example_project")
_NOT_COPIED = shutil.ignore_patterns("__pycache__", "*.py[co]", ".data", "results", "*.sqlite3")


# Bytes of padding in the environment of each layout (see run()).
LAYOUT_PADDING = (0, 40, 1000, 100, 250)


def environment(data: str, database: Path, root: Path, layout: int = 0) -> dict[str, str]:
    """The whole environment of a child: the same for every caller."""
    url = f"sqlite:///{database}"
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "SITEMAPX_INSTRUCTIONS_LAYOUT": "x" * LAYOUT_PADDING[layout],
        "DJANGO_SETTINGS_MODULE": SETTINGS[data],
        # benchmarks.settings reads BENCH_*, images_settings the example's names.
        "BENCH_DATABASE_URL": url,
        "DATABASE_URL": url,
        "BENCH_CACHE_URL": "locmemcache://",
        "CACHE_URL": "locmemcache://",
        "PYTHONPATH": str(root),
        # The same string hashes, so the same dict and set layouts, in every run.
        "PYTHONHASHSEED": "0",
    }


def template(data: str, rows: int) -> Path:
    """The SQLite file holding ``rows`` of ``data``, filled the first time."""
    DATA.mkdir(exist_ok=True)
    kind = "images" if data == "images" else "articles"
    path = DATA / f"instructions-{kind}-{rows}.sqlite3"
    subprocess.run(
        [sys.executable, __file__, "--prepare", data, str(rows)],
        cwd=ROOT,
        env=environment(data, path, ROOT),
        check=True,
    )
    return path


def run(
    variant: Variant,
    database: Path,
    valgrind: bool,
    stage: tuple[Path, Path],
    folder: Path,
    layout: int = 0,
) -> dict[str, Any]:
    """One variant in a fresh process on a fresh copy of ``database``; its figures.

    Callgrind's files go to ``folder``; the child runs from the ``stage`` (see
    ``staged()``). ``layout`` pads the child's environment: that moves its stack
    and heap, and with them the cost of copies (alignment) and of lookups
    (addresses): by up to a few tenths of a percent, the same for every run of
    the same code and layout, but any change to the code (or to the paths)
    moves the layout as much. Counts from several layouts show that noise.
    """
    root, work = stage
    copy = work / f"{variant.name}.sqlite3"
    shutil.copyfile(database, copy)
    out = folder / f"{variant.name}.{layout}.callgrind"
    command = [
        sys.executable,
        str(root / "benchmarks" / "instructions.py"),
        "--child",
        variant.name,
    ]
    if valgrind:
        command = [
            shutil.which("valgrind") or "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            f"--log-file={folder / variant.name}.{layout}.valgrind.log",
            *command,
        ]
    else:
        command.append("--no-valgrind")
    done = subprocess.run(
        command,
        cwd=root,
        env=environment(variant.data, copy, root, layout),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"variant": variant.name, "failed": f"exit {done.returncode}: {tail[:300]}"}
    result: dict[str, Any] = {"variant": variant.name, **json.loads(lines[-1])}
    if valgrind:
        result["instructions"] = instructions(out)
    copy.unlink()
    return result


def instructions(out: Path) -> int:
    """The instructions executed (event Ir) in a Callgrind output file."""
    for line in reversed(out.read_text().splitlines()):
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise ValueError(f"no totals in {out}")


def describe() -> dict[str, Any]:
    import django

    def output(*command: str) -> str:
        try:
            return subprocess.run(
                command, cwd=ROOT, capture_output=True, text=True, check=False
            ).stdout.strip()
        except OSError:
            return ""

    commit = output("git", "rev-parse", "--short", "HEAD")
    if commit and output("git", "status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "python": platform.python_version(),
        "django": django.get_version(),
        "valgrind": output("valgrind", "--version"),
    }


def summary(samples: list[dict[str, Any]], rows: int) -> dict[str, Any]:
    """One variant's figures over its layouts: the median count, the lowest and the highest."""
    failed = [s for s in samples if s.get("failed")]
    result = dict(failed[0] if failed else samples[0], rows=rows)
    counts = sorted(s["instructions"] for s in samples if "instructions" in s)
    if counts and not failed:
        result.update(
            instructions=counts[(len(counts) - 1) // 2],
            lowest=counts[0],
            highest=counts[-1],
            samples=[s["instructions"] for s in samples],
        )
    return result


def verdict(now: dict[str, Any], before: dict[str, Any]) -> str:
    """Whether two runs' counts differ by more than their layouts' own spread.

    "more" when every layout of ``now`` counts more than every layout of
    ``before``; "-" when either was counted in one layout only (no spread known).
    """
    if len(now.get("samples", ())) < 2 or len(before.get("samples", ())) < 2:
        return "-"
    if now["lowest"] > before["highest"]:
        return "**more**"
    if now["highest"] < before["lowest"]:
        return "less"
    return "within noise"


def table(
    results: list[dict[str, Any]], baseline: dict[str, dict[str, Any]], measured: bool
) -> str:
    """The figures per variant, then contrib ÷ django-sitemapx per pair, as Markdown."""
    key = "instructions" if measured else "seconds"
    unit = "instructions" if measured else "seconds (no Valgrind)"
    by_name = {r["variant"]: r for r in results}
    head = f"| variant | what | URLs | documents | {unit} | per URL |"
    rule = "|---|---|---:|---:|---:|---:|"
    if measured:
        head += " layouts: lowest to highest |"
        rule += "---:|"
    if baseline:
        head += " baseline | change | verdict |"
        rule += "---:|---:|---|"
    lines = [head, rule]
    for r in results:
        what = VARIANTS[r["variant"]].what
        if r.get("failed"):
            lines.append(f"| {r['variant']} | {what} | | | {r['failed']} | |")
            continue
        value = r.get(key, 0)
        per_url = f"{value / r['urls']:,.0f}" if measured and r["urls"] else "-"
        shown = f"{value:,}" if measured else f"{value:.3f}"
        row = (
            f"| {r['variant']} | {what} | {r['urls']:,} | {r['documents']} | {shown} | {per_url} |"
        )
        if measured:
            spread = (r["highest"] - r["lowest"]) / value
            row += f" {r['lowest']:,} to {r['highest']:,} ({spread:.2%}) |"
        old = baseline.get(r["variant"], {})
        before = old.get(key)
        if baseline:
            row += (
                f" {before:,} | {value - before:+,} ({(value - before) / before:+.3%}) |"
                f" {verdict(r, old)} |"
                if before and measured
                else " - | - | - |"
            )
        lines.append(row)
    lines += ["", "| pair | contrib ÷ django-sitemapx |" + (" baseline |" if baseline else "")]
    lines.append("|---|---:|" + ("---:|" if baseline else ""))
    for r in results:
        pair = VARIANTS[r["variant"]].pair
        theirs = by_name.get(pair)
        if not pair or not theirs or r.get("failed") or theirs.get("failed"):
            continue
        ratio = _ratio(theirs, r, key)
        row = f"| {pair} ÷ {r['variant']} | {ratio:.2f} |"
        if baseline:
            old = (
                _ratio(baseline[pair], baseline[r["variant"]], key)
                if pair in baseline and r["variant"] in baseline
                else None
            )
            row += f" {old:.2f} |" if old else " - |"
        lines.append(row)
    return "\n".join(lines)


def _ratio(contrib: dict[str, Any], ours: dict[str, Any], key: str) -> float:
    # Per URL: both sides serve the same URLs, this only guards against a difference.
    return (contrib[key] / max(contrib["urls"], 1)) / (ours[key] / max(ours["urls"], 1))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="Comma-separated subset of: %(default)s.",
    )
    parser.add_argument("--rows", type=int, default=20_000, help="Articles (default %(default)s).")
    parser.add_argument(
        "--i18n-rows",
        type=int,
        default=500,
        help="Articles of the five-language variants (default %(default)s).",
    )
    parser.add_argument(
        "--images-rows",
        type=int,
        default=2_000,
        help="Articles of the image variants, three images each (default %(default)s).",
    )
    parser.add_argument(
        "--layouts",
        type=int,
        choices=range(1, len(LAYOUT_PADDING) + 1),
        default=3,
        help="Memory layouts each django-sitemapx variant is counted in (default %(default)s; "
        "contrib's, the yardstick of the ratios, in one).",
    )
    parser.add_argument("--json", type=Path, help="Also write the figures to this file.")
    parser.add_argument(
        "--baseline", type=Path, help="A file from --json to compare with, variant by variant."
    )
    parser.add_argument(
        "--no-valgrind",
        action="store_true",
        help="Run the same processes without Valgrind: wall time only, a quick check.",
    )
    parser.add_argument("--keep", type=Path, help="Keep Callgrind's output files in this folder.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--prepare", nargs=2, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.child:
        return child(args.child, measure=not args.no_valgrind)
    if args.prepare:
        return prepare(args.prepare[0], int(args.prepare[1]))
    sys.path.insert(0, str(ROOT))
    names = [name.strip() for name in args.variants.split(",") if name.strip()]
    unknown = [name for name in names if name not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variants: {', '.join(unknown)}")
    valgrind = not args.no_valgrind
    if valgrind and shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found: apt-get install valgrind (or use --no-valgrind)")
    rows = {"articles": args.rows, "i18n": args.i18n_rows, "images": args.images_rows}
    info = describe()  # before the run: the commit measured, not one made meanwhile
    databases: dict[str, Path] = {}
    results: list[dict[str, Any]] = []
    with _folder(args.keep) as folder, staged() as stage:
        for name in names:
            variant = VARIANTS[name]
            if variant.data not in databases:
                databases[variant.data] = template(variant.data, rows[variant.data])
            layouts = args.layouts if name.startswith("sitemapx") and valgrind else 1
            samples = []
            for layout in range(layouts):
                print(f"== {name}, layout {layout}", file=sys.stderr, flush=True)
                sample = run(variant, databases[variant.data], valgrind, stage, folder, layout)
                print(f"   {json.dumps(sample)}", file=sys.stderr, flush=True)
                samples.append(sample)
            results.append(summary(samples, rows[variant.data]))
    baseline = (
        {r["variant"]: r for r in json.loads(args.baseline.read_text())["results"]}
        if args.baseline
        else {}
    )
    print(
        f"Commit {info['commit'] or '?'}, {info['date']}; Python {info['python']}, Django "
        f"{info['django']}, {info['valgrind'] if valgrind else 'no Valgrind'}; articles: "
        + ", ".join(f"{data} {count:,}" for data, count in rows.items())
        + "."
    )
    print()
    print(table(results, baseline, measured=valgrind))
    if args.json:
        payload = {"machine": info, "rows": rows, "valgrind": valgrind, "results": results}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if any(r.get("failed") for r in results) else 0


@contextlib.contextmanager
def _folder(keep: Path | None) -> Iterator[Path]:
    """The given folder (kept), or a temporary one (removed afterwards)."""
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="sitemapx-instructions-") as temporary:
        yield Path(temporary)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
