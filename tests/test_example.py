"""The example project: seeding is idempotent and its sitemap validates end to end."""

import pytest
from django.core.management import call_command
from django.test import Client

from example_project.articles.models import Article, Author
from tests.conftest import content, locs, validate_sitemap

pytestmark = pytest.mark.django_db


def test_seed_demo_is_idempotent_and_every_tenth_is_unpublished() -> None:
    call_command("seed_demo", count=120, verbosity=0)
    call_command("seed_demo", count=120, verbosity=0)
    assert Article.objects.count() == 120
    assert Article.objects.filter(is_published=False).count() == 12
    call_command("seed_demo", count=150, verbosity=0)
    assert Article.objects.count() == 150
    Article.objects.filter(slug="demo-article-7").delete()
    call_command("seed_demo", count=150, verbosity=0)
    assert Article.objects.filter(slug="demo-article-7").exists()
    assert Article.objects.count() == 150
    assert Author.objects.count() == 15
    call_command("seed_demo", count=150, authors=20, verbosity=0)
    assert Author.objects.count() == 20


def test_seeded_site_serves_a_valid_sitemap_whose_urls_resolve() -> None:
    call_command("seed_demo", count=40, verbosity=0)
    client = Client(HTTP_HOST="127.0.0.1:8000")
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    urls = []
    for loc in locs(index):
        urls += locs(validate_sitemap(content(client.get(loc))))
    assert len(urls) == 36 + 5 + 4 + 2  # articles, categories, authors (UUID keys), pages
    authors = [url for url in urls if "/authors/" in url]
    assert len(authors) == 4
    for url in urls[:5] + urls[-7:] + authors:
        assert client.get(url).status_code == 200, url


def test_seed_demo_refuses_a_negative_count() -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="zero or more"):
        call_command("seed_demo", count=-1, verbosity=0)
