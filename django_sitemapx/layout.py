"""Where each document lives: the URL paths the views serve, used as file names."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse


class Layout:
    """File names and URL paths of the documents: the paths the views serve them at.

    Taken from the URLconf when it includes ``django_sitemapx.urls``, else the
    default ``sitemap.xml`` and ``sitemap-<section>-<page>.xml`` at the top.
    """

    def __init__(self) -> None:
        try:
            self.index_path = reverse("django_sitemapx:index")
            self._from_urlconf = True
        except NoReverseMatch:
            self.index_path = "/sitemap.xml"
            self._from_urlconf = False

    def page_path(self, section: str, page: int) -> str:
        """URL path of a page, e.g. ``/sitemap-article-2.xml``."""
        if self._from_urlconf:
            from .views import page_path

            return page_path(section, page)
        return f"/sitemap-{section}-{page}.xml"

    @staticmethod
    def file_name(path: str) -> str:
        return path.lstrip("/")
