"""The rules' admin, and the inspector saying which rule or override decided (issue 26)."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from django_sitemapx.models import Override, Rule
from example_project.articles.factories import ArticleFactory
from tests.support.admin import EDITOR_PERMISSIONS, INSPECT, staff_client

pytestmark = pytest.mark.django_db

RULE_PERMISSIONS = ("add_rule", "change_rule", "delete_rule", "view_rule")
RULES = "admin:django_sitemapx_rule_changelist"
ADD_RULE = "admin:django_sitemapx_rule_add"


@pytest.fixture
def rule_editor() -> Client:
    return staff_client(*EDITOR_PERMISSIONS, *RULE_PERMISSIONS)


def _values(context: dict) -> dict[str, tuple[str, str]]:  # type: ignore[type-arg]
    return {str(v.label): (v.value, str(v.set_by)) for v in context["values"]}


def test_the_inspector_names_the_rule_that_excludes_a_url(rule_editor: Client) -> None:
    rule = Rule.objects.create(pattern="/ab", exclude=True)
    context = rule_editor.get(reverse(INSPECT), {"url": "/about/"}).context
    assert not context["in_sitemap"]
    assert str(context["reason"]) == "A rule excludes this URL from the sitemap."
    link = reverse("admin:django_sitemapx_rule_change", args=[rule.pk])
    assert str(context["excluding_rule"]) == (
        f'<a href="{link}" class="deciding-rule">rule <code>/ab</code></a>'
    )


def test_an_override_lists_a_url_a_rule_excludes_and_the_inspector_says_so(
    rule_editor: Client,
) -> None:
    Rule.objects.create(pattern="/ab", exclude=True, changefreq="never")
    Override.objects.create(location="/about/", priority=Decimal("0.2"))
    context = rule_editor.get(reverse(INSPECT), {"url": "/about/"}).context
    assert context["in_sitemap"] and context["excluding_rule"] is None
    values = _values(context)
    assert values["priority"] == ("0.2", "override")
    assert values["change frequency"][0] == "never"
    assert "rule <code>/ab</code>" in values["change frequency"][1]


def test_the_inspector_names_the_deciding_rule_per_value_without_a_link_for_who_may_not_view_rules(
    editor: Client,
) -> None:
    article = ArticleFactory()
    Rule.objects.create(matching="glob", pattern="/articles/*", priority=Decimal("0.9"))
    Rule.objects.create(pattern="/articles/", priority=Decimal("0.1"), position=500)
    values = _values(editor.get(reverse(INSPECT), {"url": article.get_absolute_url()}).context)
    assert values["priority"] == ("0.9", "rule <code>/articles/*</code>")
    assert values["change frequency"][1] == "section"
    assert list(values) == ["last modified", "change frequency", "priority"]


def test_an_editor_adds_a_rule_through_the_admin(rule_editor: Client) -> None:
    response = rule_editor.post(
        reverse(ADD_RULE),
        {
            "matching": "prefix",
            "pattern": "/tag/café/",
            "host": "Example.com",
            "section": "article",
            "position": "10",
            "exclude": "on",
            "changefreq": "",
            "priority": "",
            "note": "tag pages are thin",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    rule = Rule.objects.get()
    assert (rule.pattern, rule.host, rule.section) == ("/tag/caf%C3%A9/", "example.com", "article")
    assert rule.changed_by is not None
    listing = rule_editor.get(reverse(RULES))
    assert listing.status_code == 200 and b"/tag/caf%C3%A9/" in listing.content


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"matching": "prefix", "pattern": "tag/", "exclude": "on"}, "pattern"),
        ({"matching": "prefix", "pattern": "/a*", "exclude": "on"}, "pattern"),
        ({"matching": "glob", "pattern": "/a/*", "section": "nope", "exclude": "on"}, "section"),
        ({"matching": "glob", "pattern": "/a/*", "host": "a b", "exclude": "on"}, "host"),
        ({"matching": "glob", "pattern": "/a/*"}, "__all__"),
    ],
)
def test_a_bad_rule_is_a_form_error(rule_editor: Client, data: dict[str, str], field: str) -> None:
    response = rule_editor.post(reverse(ADD_RULE), {"position": "100", **data})
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert not Rule.objects.exists()


def test_without_the_rule_permissions_the_rules_are_refused() -> None:
    assert staff_client(*EDITOR_PERMISSIONS).get(reverse(RULES)).status_code == 403


def test_the_admin_imports_without_the_stubs_runtime_patch() -> None:
    # django-stubs' generics (ModelForm[Rule]) are not subscriptable at run time
    # unless django_stubs_ext patches them, which a project need not do.
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='example_project.settings';"
        "django.setup(); import django_sitemapx.admin.rules; print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    assert result.stdout.strip() == "ok", result.stderr[-2000:]
