"""``SITEMAPX_XML_STYLESHEET``: a CSS stylesheet the XML documents link to, still schema-valid."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from django_sitemapx.writer import stylesheet_instruction
from example_project.articles.factories import ArticleFactory
from tests.conftest import content, validate_sitemap

pytestmark = pytest.mark.django_db

DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'
SHIPPED = b'<?xml-stylesheet type="text/css" href="/static/django_sitemapx/sitemap.css"?>\n'


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-article-1.xml"])
def test_every_document_links_the_stylesheet_and_stays_valid(settings: Any, path: str) -> None:
    ArticleFactory()
    settings.SITEMAPX_XML_STYLESHEET = "django_sitemapx/sitemap.css"
    body = content(Client().get(path))
    assert body.startswith(DECLARATION + SHIPPED)
    validate_sitemap(body)


def test_no_stylesheet_by_default() -> None:
    ArticleFactory()
    body = content(Client().get("/sitemap-article-1.xml"))
    assert b"xml-stylesheet" not in body
    assert body.startswith(DECLARATION + b"<urlset")


def test_a_cached_document_follows_a_change_of_stylesheet(settings: Any) -> None:
    ArticleFactory()
    assert b"xml-stylesheet" not in content(Client().get("/sitemap-article-1.xml"))
    settings.SITEMAPX_XML_STYLESHEET = "/css/sitemap.css"
    body = content(Client().get("/sitemap-article-1.xml"))
    assert b'href="/css/sitemap.css"' in body


def test_the_href_is_escaped_as_a_pseudo_attribute() -> None:
    instruction = stylesheet_instruction('https://cdn.example/s.css?a=1&b="2"?>')
    assert instruction == (
        '<?xml-stylesheet type="text/css" '
        'href="https://cdn.example/s.css?a=1&amp;b=&quot;2&quot;?&gt;"?>\n'
    )
    assert stylesheet_instruction(None) == stylesheet_instruction("") == ""
