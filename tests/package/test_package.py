"""The package a user installs: built, checked file by file, installed, used as the guide says.

Run by the ``package`` leg of ``scripts/test`` (``SITEMAPX_PACKAGE_TEST=1``); skipped
elsewhere, as it builds the package, creates a virtualenv and installs Django into it
(about a minute). Steps:

1. ``python -m build`` makes the sdist, then the wheel from the sdist;
2. the wheel holds exactly the tracked files of ``django_sitemapx/`` (``git ls-files``),
   the sdist those plus the docs, the tests, the example project and the top-level files;
3. a new virtualenv in a temporary folder outside the checkout gets the wheel, and
   ``django-admin startproject`` a new project;
4. the project is edited as ``docs/guide/installation.md`` says (the commands and lines
   used here are checked to be in the guide, word for word), with one app registering a
   model section as the quickstart does;
5. ``check`` is clean; under ``runserver``, ``/sitemap.xml`` and its pages are valid
   against the schemas, every admin page of the app answers 200 for a superuser (and the
   override list shows its two buttons), the app's static file is served;
   ``sitemap_export`` writes valid files, and with spliced pages on, splices the page of a
   saved row.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import NS, ROOT, locs, validate_sitemap

if not os.environ.get("SITEMAPX_PACKAGE_TEST"):
    pytest.skip(
        "builds and installs the package: run by scripts/test's package leg "
        "(SITEMAPX_PACKAGE_TEST=1)",
        allow_module_level=True,
    )

GUIDE = (ROOT / "docs" / "guide" / "installation.md").read_text()
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
PASSWORD = "package-leg-not-secret"
# The top-level files the sdist carries besides the package and the docs.
SDIST_FILES = {
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "pyproject.toml",
    "MANIFEST.in",
    "mkdocs.yml",
}
SDIST_FOLDERS = ("django_sitemapx", "docs", "tests", "example_project")
TIMEOUT = 600


def _run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} failed ({result.returncode}):\n"
        f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    return result.stdout + result.stderr


def _in_guide(text: str) -> str:
    """``text``, once it is checked to be in the installation guide as written."""
    assert text in GUIDE, f"docs/guide/installation.md no longer says {text!r}"
    return text


def tracked(*paths: str) -> set[str]:
    """The files git tracks under ``paths`` (the package as committed, nothing stray)."""
    output = _run("git", "ls-files", "-z", "--", *paths, cwd=ROOT)
    return {name for name in output.split("\0") if name and (ROOT / name).is_file()}


# -- build and contents -------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    # Outside the checkout, so nothing of it can be imported by accident.
    path = Path(tempfile.mkdtemp(prefix="sitemapx-package-"))
    assert not path.is_relative_to(ROOT)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def dist(workdir: Path) -> dict[str, Path]:
    out = workdir / "dist"
    # With neither --sdist nor --wheel, build makes the sdist and then the wheel from
    # the sdist: a file the sdist lacks is missing from the wheel too. The backend is the
    # one pyproject.toml names, installed by the "package" extra (an isolated build
    # would download it twice per run).
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    assert wheel.name == f"django_sitemapx-{VERSION}-py3-none-any.whl"
    return {"wheel": wheel, "sdist": sdist}


def test_the_wheel_holds_exactly_the_tracked_package_files(dist: dict[str, Path]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = {name for name in wheel.namelist() if ".dist-info/" not in name}
    expected = tracked("django_sitemapx")
    assert any(name.endswith(".html") for name in expected)  # the templates are tracked
    assert sorted(expected - names) == [], "missing from the wheel"
    assert sorted(names - expected) == [], "in the wheel but not tracked"


def test_the_sdist_holds_the_tracked_package_docs_tests_and_top_files(
    dist: dict[str, Path],
) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        members = [member.name for member in sdist.getmembers() if member.isfile()]
    prefix = f"django_sitemapx-{VERSION}/"
    assert all(name.startswith(prefix) for name in members)
    names = {name.removeprefix(prefix) for name in members}
    # setuptools' own metadata, not ours to track.
    names = {
        name
        for name in names
        if name not in {"PKG-INFO", "setup.cfg"} and ".egg-info/" not in name
    }
    expected = tracked(*SDIST_FOLDERS) | tracked(*SDIST_FILES)
    assert sorted(expected - names) == [], "missing from the sdist"
    assert sorted(names - expected) == [], "in the sdist but not tracked"


# -- a new project, as the installation guide says ------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


BLOG_MODELS = """
from django.db import models
from django.urls import reverse


class Post(models.Model):
    slug = models.SlugField(unique=True)
    updated_at = models.DateTimeField()

    def get_absolute_url(self):
        return reverse("post-detail", kwargs={"slug": self.slug})
"""
BLOG_SITEMAPX = """
import django_sitemapx as sitemapx

from .models import Post


@sitemapx.register(Post)
class PostSitemap(sitemapx.ModelSource):
    url_name = "post-detail"
    url_kwargs = {"slug": "slug"}
    lastmod_field = "updated_at"
"""
BLOG_URLS = """
from django.http import HttpResponse
from django.urls import path

urlpatterns = [path("posts/<slug:slug>/", lambda request, slug: HttpResponse(slug),
                     name="post-detail")]
"""
ADD_POSTS = """
import datetime
from blog.models import Post
when = datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)
Post.objects.bulk_create(Post(slug=f"post-{n}", updated_at=when) for n in range(3))
"""


@pytest.fixture(scope="module")
def project(workdir: Path, dist: dict[str, Path]) -> dict[str, object]:
    venv = workdir / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    # The guide's command, with the wheel built above.
    wheel_step = _in_guide(f"pip install ./django-sitemapx/dist/{dist['wheel'].name}")
    _run(python, "-m", "pip", "install", "--quiet", dist["wheel"])
    assert wheel_step.endswith(dist["wheel"].name)
    site = workdir / "site"
    site.mkdir()
    _run(venv / "bin" / "django-admin", "startproject", "mysite", ".", cwd=site)
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "DJANGO_SETTINGS_MODULE": "mysite.settings",
        "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
    }
    for name in ("PYTHONPATH", "DATABASE_URL", "CACHE_URL", "VIRTUAL_ENV"):
        env.pop(name, None)
    # What the guide's steps 2 and 3 say, line for line.
    settings = site / "mysite" / "settings.py"
    text = settings.read_text()
    app_line = _in_guide('"django_sitemapx",')
    for quote in "'\"":
        staticfiles = f"    {quote}django.contrib.staticfiles{quote},\n"
        text = text.replace(staticfiles, f"{staticfiles}    {app_line}\n    'blog',\n")
    assert app_line in text, "startproject's settings changed shape"
    settings.write_text(text)
    urls = site / "mysite" / "urls.py"
    include_line = _in_guide('path("", include("django_sitemapx.urls")),')
    text = urls.read_text().replace(
        "from django.urls import path", _in_guide("from django.urls import include, path")
    )
    text = text.replace(
        "urlpatterns = [",
        f'urlpatterns = [\n    {include_line}\n    path("", include("blog.urls")),',
    )
    urls.write_text(text)
    # One app with a model section, as the quickstart registers one.
    manage = [str(python), "manage.py"]
    _run(venv / "bin" / "django-admin", "startapp", "blog", cwd=site)
    (site / "blog" / "models.py").write_text(BLOG_MODELS)
    (site / "blog" / "sitemapx.py").write_text(BLOG_SITEMAPX)
    (site / "blog" / "urls.py").write_text(BLOG_URLS)
    _run(*manage, "makemigrations", "blog", cwd=site, env=env)
    _in_guide("python manage.py migrate")
    _run(*manage, "migrate", "--no-input", cwd=site, env=env)
    _run(*manage, "shell", "-c", ADD_POSTS, cwd=site, env=env)
    _run(
        *manage,
        "createsuperuser",
        "--no-input",
        "--username",
        "admin",
        "--email",
        "admin@example.com",
        cwd=site,
        env=env,
    )
    return {"python": python, "site": site, "env": env, "manage": manage}


def test_the_installed_package_is_the_wheel_not_the_checkout(project: dict[str, object]) -> None:
    output = _run(
        project["python"],  # type: ignore[arg-type]
        "-c",
        "import django_sitemapx, pathlib; print(pathlib.Path(django_sitemapx.__file__))",
        cwd=project["site"],  # type: ignore[arg-type]
        env=project["env"],  # type: ignore[arg-type]
    )
    location = Path(output.strip())
    assert "site-packages" in location.parts and not location.is_relative_to(ROOT)
    assert (location.parent / "templates" / "admin" / "django_sitemapx" / "inspect.html").is_file()


def test_check_is_clean(project: dict[str, object]) -> None:
    _in_guide("python manage.py check")
    output = _run(
        *project["manage"],
        "check",
        "--fail-level",
        "WARNING",  # type: ignore[misc]
        cwd=project["site"],
        env=project["env"],  # type: ignore[arg-type]
    )
    assert "System check identified no issues (0 silenced)." in output


def test_sitemap_export_writes_valid_files(project: dict[str, object], workdir: Path) -> None:
    out = workdir / "export"
    _run(
        *project["manage"],
        "sitemap_export",
        "--output-dir",
        out,  # type: ignore[misc]
        "--base-url",
        "https://example.com",
        cwd=project["site"],
        env=project["env"],  # type: ignore[arg-type]
    )
    index = validate_sitemap((out / "sitemap.xml").read_bytes())
    assert locs(index) == ["https://example.com/sitemap-post-1.xml"]
    page = validate_sitemap((out / "sitemap-post-1.xml").read_bytes())
    assert locs(page) == [f"https://example.com/posts/post-{n}/" for n in range(3)]


SAVE_POST = """
import datetime
from blog.models import Post
post = Post.objects.get(slug="post-1")
post.updated_at = datetime.datetime(2024, 6, {day}, 3, 4, 5, tzinfo=datetime.UTC)
post.save()
"""


def test_an_incremental_export_splices_the_saved_posts_page(
    project: dict[str, object], workdir: Path
) -> None:
    # SITEMAPX_EXPORT_SPLICE on: the page of a saved row is spliced from its previous file
    # (its old file copied ahead, the changed element written over the copy); the file it
    # replaced is kept as its spare, which the next splice writes over instead of a copy.
    site: Path = project["site"]  # type: ignore[assignment]
    (site / "mysite" / "splice_settings.py").write_text(
        "from .settings import *  # noqa: F403\nSITEMAPX_EXPORT_SPLICE = True\n"
    )
    env = {**project["env"], "DJANGO_SETTINGS_MODULE": "mysite.splice_settings"}  # type: ignore[dict-item]
    out = workdir / "spliced"
    command = [*project["manage"], "sitemap_export", "--base-url", "https://example.com"]  # type: ignore[misc]
    export = [*command, "--output-dir", out]
    _run(*export, cwd=site, env=env)
    before = (out / "sitemap-post-1.xml").read_bytes()
    save = [*project["manage"], "shell", "-c"]  # type: ignore[misc]
    # Written whole, the page has a copy of itself as its spare where the file system
    # copies every byte; where it clones, none (the first splice's clone costs as much).
    asked = (
        "from django_sitemapx.export import FolderDestination\n"
        f"print(FolderDestination({str(out)!r}).clones())"
    )
    clones = _run(*save, asked, cwd=site, env=env).strip().splitlines()[-1]
    spare = out / ".sitemap-post-1.xml.sitemapx-spare"
    if clones == "False":
        assert spare.read_bytes() == before
    else:
        assert clones == "True" and not spare.exists()
    # Saved twice: the second splice starts from the blocks file the first one wrote.
    for day in (2, 3):
        _run(*save, SAVE_POST.format(day=day), cwd=site, env=env)
        output = _run(*export, cwd=site, env=env)
        assert "; 1 spliced; " in output, output
        after = (out / "sitemap-post-1.xml").read_bytes()
        assert len(after) == len(before) and after != before
        assert (out / ".sitemap-post-1.xml.sitemapx-spare").read_bytes() == before
        page = validate_sitemap(after)
        lastmods = [element.text for element in page.findall(".//sm:lastmod", NS)]
        assert lastmods[1] == f"2024-06-0{day}T03:04:05+00:00", lastmods
        before = after
    assert not [path.name for path in out.iterdir() if path.name.endswith(".sitemapx-tmp")]
    # The same bytes as a full export of the same rows.
    full = workdir / "spliced-full"
    _run(*command, "--output-dir", full, "--full", cwd=site, env=env)
    assert (full / "sitemap-post-1.xml").read_bytes() == after


@pytest.fixture(scope="module")
def server(project: dict[str, object]) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [*project["manage"], "runserver", "--noreload", f"127.0.0.1:{port}"],  # type: ignore[misc]
        cwd=project["site"],  # type: ignore[arg-type]
        env=project["env"],  # type: ignore[arg-type]
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/admin/login/", timeout=5).close()
                break
            except (urllib.error.URLError, ConnectionError) as error:
                if process.poll() is not None or time.monotonic() > deadline:
                    assert process.stderr is not None
                    message = f"runserver did not start: {process.stderr.read()}"
                    raise AssertionError(message) from error
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        process.stderr.close()


def test_the_served_sitemap_is_valid(server: str) -> None:
    with urllib.request.urlopen(f"{server}/sitemap.xml", timeout=30) as response:
        index = validate_sitemap(response.read())
    pages = locs(index)
    assert pages == [f"{server}/sitemap-post-1.xml"]
    with urllib.request.urlopen(pages[0], timeout=30) as response:
        page = validate_sitemap(response.read())
    assert len(page.findall("sm:url", NS)) == 3


class _Browser:
    """A logged-in admin session over plain HTTP, CSRF token included."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def login(self) -> None:
        self.get("/admin/login/")
        token = next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")
        data = urllib.parse.urlencode(
            {
                "username": "admin",
                "password": PASSWORD,
                "csrfmiddlewaretoken": token,
                "next": "/admin/",
            }
        ).encode()
        request = urllib.request.Request(
            self.base + "/admin/login/", data=data, headers={"Referer": self.base}
        )
        with self.opener.open(request, timeout=60) as response:
            assert response.url.endswith("/admin/"), "the superuser could not log in"


def test_every_admin_page_of_the_app_answers_200(server: str, project: dict[str, object]) -> None:
    _run(
        *project["manage"],
        "shell",
        "-c",  # type: ignore[misc]
        "from django_sitemapx.models import Override; "
        "Override.objects.create(location='/posts/post-1/', exclude=True)",
        cwd=project["site"],
        env=project["env"],  # type: ignore[arg-type]
    )
    browser = _Browser(server)
    browser.login()
    base = "/admin/django_sitemapx/override/"
    status, changelist = browser.get(base)
    assert status == 200
    # The buttons of the two extra pages, from the app's change_list template.
    assert 'href="/admin/django_sitemapx/override/inspect/"' in changelist
    assert 'href="/admin/django_sitemapx/override/overview/"' in changelist
    found = re.search(r'href="/admin/django_sitemapx/override/(\d+)/change/', changelist)
    assert found, "the override is not listed"
    pk = found.group(1)
    pages = [
        "/admin/",
        "/admin/django_sitemapx/",
        base,
        f"{base}?exclude__exact=1",
        f"{base}add/",
        f"{base}{pk}/change/",
        f"{base}{pk}/history/",
        f"{base}{pk}/delete/",
        f"{base}inspect/",
        f"{base}inspect/?url=%2Fposts%2Fpost-1%2F",
        f"{base}inspect/?url=%2Fposts%2Fpost-2%2F",
        f"{base}overview/",
        "/static/django_sitemapx/admin.css",
    ]
    answers = {path: browser.get(path)[0] for path in pages}
    assert answers == dict.fromkeys(pages, 200)
    _, inspector = browser.get(f"{base}inspect/?url=%2Fposts%2Fpost-2%2F")
    assert 'id="in-sitemap"' in inspector and "sitemap-post-1.xml" in inspector
    _, overview = browser.get(f"{base}overview/")
    assert 'href="/sitemap-post-1.xml"' in overview
