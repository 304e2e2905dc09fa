"""Editors' sitemap values from Wagtail's page editor (``SitemapPanel``), stored as overrides.

Through Wagtail's own edit view, with Django's test client: the panel renders
on the promote tab, saving the page writes (or removes) the override of its
URL, and the sitemap follows. Needs the wagtail leg (see test_wagtail_source).
"""

# The sites and translations are test_wagtail_source's fixtures, imported: their names
# are parameters here too.
# ruff: noqa: F811

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.wagtailsite.leg import skip_unless_in_leg

skip_unless_in_leg()

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.test import Client, RequestFactory
from wagtail.models import Page
from wagtail.test.utils.form_data import querydict_from_html

from django_sitemapx.contrib.wagtail import WagtailPageSource
from django_sitemapx.contrib.wagtail.editing import save_from_request
from django_sitemapx.contrib.wagtail.panels import SitemapPanel
from django_sitemapx.models import Override
from tests.conftest import NS, validate_sitemap
from tests.wagtailsite.models import ArticlePage
from tests.wagtailsite.test_wagtail_source import (  # noqa: F401 - fixtures
    XHTML,
    _fresh_site_root_paths,
    document,
    publish,
    translated,
    two_sites,
    urls,
    wagtail,
)

pytestmark = pytest.mark.django_db


class Editor(Client):
    """A superuser's client on a.example; its posts run what they queue for the commit."""

    commits: Any  # pytest-django's django_capture_on_commit_callbacks

    def post(self, *args: Any, **kwargs: Any) -> Any:
        # Overrides invalidate once committed, and a test's transaction never commits.
        with self.commits(execute=True):
            return super().post(*args, **kwargs)


@pytest.fixture
def editor(django_capture_on_commit_callbacks: Any) -> Editor:
    user = get_user_model().objects.create_superuser("editor", "editor@example.com", "pw")
    client = Editor(HTTP_HOST="a.example")
    client.commits = django_capture_on_commit_callbacks
    client.force_login(user)
    return client


def edit_url(page: Page) -> str:
    return f"/cms/pages/{page.pk}/edit/"


def edit_form(client: Client, page: Page) -> Any:
    """The page's edit form as the browser would post it (its current values)."""
    response = client.get(edit_url(page))
    assert response.status_code == 200
    return response, querydict_from_html(response.content.decode(), form_id="page-edit-form")


def save(client: Client, page: Page, publish: bool = False, **values: str) -> Any:
    """Post ``page``'s edit form with the panel's fields set to ``values`` (None: unset)."""
    _response, data = edit_form(client, page)
    for name, value in values.items():
        field = f"sitemapx-{name}"
        if value is None:
            data.pop(field, None)
        else:
            data[field] = value
    if publish:
        data["action-publish"] = "action-publish"
    response = client.post(edit_url(page), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return response


def locs(host: str) -> set[str]:
    return {loc for loc, _ in urls(document(host))}


def test_the_panel_renders_on_the_promote_tab_with_the_pages_url(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], editor: Editor
) -> None:
    story = two_sites["story"]
    response, data = edit_form(editor, story)
    html = response.content.decode()
    assert "data-sitemapx-panel" in html
    for name in ("present", "exclude", "priority", "changefreq"):
        assert f'name="sitemapx-{name}"' in html
    assert story.get_full_url() in html
    # A link to the URL in our inspector.
    assert "/admin/django_sitemapx/override/inspect/?url=" in html
    assert data["sitemapx-present"] == "1"
    # A page type without the panel posts none of its fields.
    _response, event = edit_form(editor, two_sites["event"])
    assert "sitemapx-present" not in event


def test_excluding_a_page_in_its_editor_writes_the_override_and_drops_the_url(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], editor: Editor
) -> None:
    story = two_sites["story"]
    assert story.get_full_url() in locs("a.example")
    save(editor, story, exclude="on")
    override = Override.objects.get()
    assert override.location == "/pages/news/story"
    assert override.exclude is True
    assert override.section == "wagtail"
    assert override.changed_by is not None and override.changed_by.get_username() == "editor"
    assert story.get_full_url() not in locs("a.example")
    # The same values again: the override is left as it was.
    updated = override.updated_at
    save(editor, story, publish=True, exclude="on")
    assert Override.objects.get().updated_at == updated
    # Unticked: the override held nothing else, it is deleted and the URL is back.
    save(editor, story, exclude=None)
    assert not Override.objects.exists()
    assert story.get_full_url() in locs("a.example")


def test_priority_and_changefreq_from_the_editor_reach_the_sitemap(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], editor: Editor
) -> None:
    news = two_sites["news"]
    save(editor, news, priority="0.3", changefreq="weekly")
    override = Override.objects.get()
    assert (override.priority, override.changefreq, override.exclude) == (
        Decimal("0.3"),
        "weekly",
        False,
    )
    root = validate_sitemap(document("a.example"))
    for element in root.iterfind("sm:url", NS):
        if element.findtext("sm:loc", namespaces=NS) == news.get_full_url():
            assert element.findtext("sm:priority", namespaces=NS) == "0.3"
            assert element.findtext("sm:changefreq", namespaces=NS) == "weekly"
            break
    else:
        raise AssertionError("news is not listed")
    # The panel shows what is stored.
    _response, data = edit_form(editor, news)
    assert (data["sitemapx-priority"], data["sitemapx-changefreq"]) == ("0.3", "weekly")
    # A lastmod forced in the Django admin is not the panel's: clearing keeps the override.
    Override.objects.update(lastmod=news.last_published_at)
    save(editor, news, priority="", changefreq="")
    override = Override.objects.get()
    assert (override.priority, override.changefreq) == (None, "")
    assert override.lastmod is not None


def test_excluding_a_translation_prunes_it_from_the_others_alternates(
    wagtail: WagtailPageSource, translated: dict[str, Page], editor: Editor
) -> None:
    english, french = translated["story"], translated["story:fr"]
    save(editor, french, exclude="on")
    assert Override.objects.get().location == "/fr/pages/news/story"
    root = validate_sitemap(document("a.example"))
    links: dict[str, dict[str, str]] = {}
    for element in root.iterfind("sm:url", NS):
        loc = str(element.findtext("sm:loc", namespaces=NS))
        links[loc] = {link.get("hreflang"): link.get("href") for link in element.iter(XHTML)}
    assert french.get_full_url() not in links
    assert french.get_full_url() not in links[english.get_full_url()].values()
    assert "fr" not in links[english.get_full_url()]


def test_an_invalid_value_is_refused_with_a_message_and_nothing_written(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], editor: Editor
) -> None:
    response = save(editor, two_sites["story"], priority="1.5")
    assert not Override.objects.exists()
    shown = [str(message) for message in get_messages(response.wsgi_request)]
    assert any("sitemap settings were not saved" in message for message in shown), shown


def test_without_the_override_permissions_the_panel_shows_values_and_saving_writes_nothing(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    story = two_sites["story"]
    Override.objects.create(location=story.get_url(), priority=Decimal("0.2"))
    user = get_user_model().objects.create_user("viewer", "viewer@example.com", "pw")
    user.user_permissions.add(Permission.objects.get(codename="view_override"))
    user = get_user_model().objects.get(pk=user.pk)  # fresh permission cache
    request = RequestFactory().get("/", HTTP_HOST="a.example")
    request.user = user
    panel = SitemapPanel().bind_to_model(ArticlePage)
    html = panel.get_bound_panel(instance=story, request=request, form=None).render_html()
    assert "data-sitemapx-panel" in html and "0.2" in html
    assert 'name="sitemapx-' not in html
    # A posted panel from such a user changes nothing.
    post = RequestFactory().post(
        "/", {"sitemapx-present": "1", "sitemapx-exclude": "on"}, HTTP_HOST="a.example"
    )
    post.user = user
    post._messages = _Messages()  # type: ignore[attr-defined]
    save_from_request(post, story)
    assert Override.objects.get().exclude is False
    # Nobody without the view permission sees the panel at all.
    request.user = get_user_model().objects.create_user("nobody")
    bound = panel.get_bound_panel(instance=story, request=request, form=None)
    assert not bound.is_shown()


class _Messages(list[Any]):
    """A message store for a bare RequestFactory request."""

    def add(self, level: int, message: str, extra_tags: str = "") -> None:
        self.append(message)


def test_two_sites_pages_at_the_same_path_keep_their_own_values(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], editor: Editor
) -> None:
    a_news = two_sites["news"]
    b_news = publish(
        two_sites["b.example"].add_child(instance=ArticlePage(title="N", slug="news"))
    )
    assert a_news.url_path != b_news.url_path
    assert a_news.get_full_url() == b_news.get_full_url().replace("b.example", "a.example")
    # Editors of each site, each on its own page: one override per site's host.
    save(editor, a_news, exclude="on")
    save(editor, b_news, priority="0.8")
    stored = {o.host: o for o in Override.objects.all()}
    assert set(stored) == {"a.example", "b.example"}
    assert stored["a.example"].location == stored["b.example"].location == "/pages/news"
    assert stored["a.example"].exclude and stored["a.example"].priority is None
    assert not stored["b.example"].exclude and stored["b.example"].priority == Decimal("0.8")
    # Each site's sitemap follows its own.
    assert a_news.get_full_url() not in locs("a.example")
    root = validate_sitemap(document("b.example"))
    priorities = {
        element.findtext("sm:loc", namespaces=NS): element.findtext("sm:priority", namespaces=NS)
        for element in root.iterfind("sm:url", NS)
    }
    assert priorities[b_news.get_full_url()] == "0.8"
    # The panel reads each back the same way.
    _response, a_data = edit_form(editor, a_news)
    _response, b_data = edit_form(editor, b_news)
    assert "sitemapx-exclude" in a_data and a_data["sitemapx-priority"] == ""
    assert "sitemapx-exclude" not in b_data and b_data["sitemapx-priority"] == "0.8"
    # Clearing one site's values leaves the other's.
    save(editor, a_news, exclude=None)
    assert list(Override.objects.values_list("host", flat=True)) == ["b.example"]
    assert a_news.get_full_url() in locs("a.example")


def test_an_override_of_every_host_shows_in_the_panel_and_saving_it_unchanged_writes_none(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], editor: Editor
) -> None:
    news = two_sites["news"]
    every_host = Override.objects.create(location="/pages/news", priority=Decimal("0.2"))
    _response, data = edit_form(editor, news)
    assert data["sitemapx-priority"] == "0.2"
    save(editor, news)  # the values it showed, unchanged
    assert list(Override.objects.all()) == [every_host]
    # A change writes the override of the page's host; the one of every host stays.
    save(editor, news, priority="0.6")
    assert dict(Override.objects.values_list("host", "priority")) == {
        "": Decimal("0.2"),
        "a.example": Decimal("0.6"),
    }
