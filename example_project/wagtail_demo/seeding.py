"""The demo's two Wagtail sites, each in English and French (``seed_wagtail_demo``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils.text import slugify
from wagtail.models import Locale, Page, Site

from example_project.wagtail_demo.models import DemoEventPage, DemoPage

HOSTS = ("a.localhost", "b.localhost")
PORT = 8000
LANGUAGES = ("en", "fr")


@dataclass
class Seeded:
    """What a seeding made: the sites' homes and their pages (per host), every language."""

    homes: dict[str, Page] = field(default_factory=dict)
    pages: dict[str, list[Page]] = field(default_factory=dict)


def publish(page: Page) -> Page:
    page.save_revision().publish()
    page.refresh_from_db()
    return page


@transaction.atomic
def seed(hosts: tuple[str, ...] = HOSTS, port: int = PORT, count: int = 5) -> Seeded:
    """Make (again) a site per host with ``count`` pages and an event, in English and French.

    A second run replaces the demo's sites and pages; other sites are left alone.
    """
    root = Page.get_first_root_node()
    english = Locale.objects.get_or_create(language_code="en")[0]
    french = Locale.objects.get_or_create(language_code="fr")[0]
    Site.objects.filter(hostname__in=hosts).delete()
    for host in hosts:
        for page in Page.objects.child_of(root).filter(slug__startswith=slugify(host)):
            page.delete()
    seeded = Seeded()
    for host in hosts:
        slug = slugify(host)
        home = root.add_child(
            instance=DemoPage(title=host, slug=slug, locale=english, body=f"The home of {host}.")
        )
        publish(home)
        Site.objects.create(hostname=host, port=port, root_page=home, site_name=host)
        pages: list[Page] = [home]
        for number in range(1, count + 1):
            page = home.add_child(
                instance=DemoPage(title=f"Page {number}", slug=f"page-{number}", body="Text.")
            )
            pages.append(publish(page))
        pages.append(
            publish(home.add_child(instance=DemoEventPage(title="Open day", slug="open-day")))
        )
        for page in list(pages):
            copy = page.specific.copy_for_translation(french, copy_parents=True)
            copy.slug = page.slug if page.depth > home.depth else f"{slug}-fr"
            copy.title = f"{page.title} (fr)"
            pages.append(publish(copy))
        seeded.homes[host] = home
        seeded.pages[host] = pages
    return seeded
