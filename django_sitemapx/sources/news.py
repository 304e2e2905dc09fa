"""News sections: a ``ModelSource`` of the articles published in the last two days."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Min
from django.utils import timezone

from ..exceptions import SourceConfigurationError
from ..extensions.values import NEWS_MAX_AGE, Publication, news_moment
from .pages import PageTable, State
from .querysets import ModelSource


class AgingPageTable(PageTable):
    """A news section's stored pages, every page asked for counted again.

    Rows leave a news section as they turn two days old, with no save to move
    a page's cache generation: a stored count would keep listing a page whose
    rows all aged out. A news section holds two days of rows, so counting its
    pages (one aggregate each) whenever the index or a page is built is cheap.
    """

    def _is_stale(self, state: State) -> bool:
        return True


class NewsSource(ModelSource):
    """A news section: the rows published in the last two days, at most 1,000 per page.

    ``publication_date_field`` and ``title_field`` name the row's publication
    date and headline; ``news_publication`` the publication. Rows older than two
    days are not listed, and a cached page is served no longer than
    ``cache_timeout`` seconds (five minutes) nor past the moment its oldest
    item turns two days old.
    """

    publication_date_field: str = ""
    title_field: str = ""
    news_publication: Publication | None = None
    cache_timeout: float | None = 300

    def validate(self) -> None:
        if not self.publication_date_field or not self.title_field:
            raise SourceConfigurationError(
                f"{type(self).__name__} needs publication_date_field and title_field"
            )
        if self.news_publication is None:
            raise SourceConfigurationError(
                f"{type(self).__name__} needs news_publication = Publication(name, language)"
            )
        super().validate()

    def page_table(self) -> PageTable:
        """The section's stored pages, counted again on every read (see ``AgingPageTable``)."""
        return AgingPageTable(self)

    def get_queryset(self) -> models.QuerySet[Any]:
        cutoff = timezone.now() - NEWS_MAX_AGE
        return super().get_queryset().filter(**{f"{self.publication_date_field}__gte": cutoff})

    def row_fields(self) -> list[str]:
        names = [*super().row_fields(), self.publication_date_field, self.title_field]
        return list(dict.fromkeys(names))

    def news(self, row: Any) -> Any:
        """The row's news: its publication date and title fields."""
        if isinstance(row, models.Model):
            date = getattr(row, self.publication_date_field)
            title = getattr(row, self.title_field)
        else:
            names = self.row_fields()
            date = row[names.index(self.publication_date_field)]
            title = row[names.index(self.title_field)]
        if date is None:
            return None
        return {"title": title, "publication_date": date}

    def expires(self) -> float | None:
        """When documents built now stop being true: the oldest item turns two days old.

        Capped at ``cache_timeout`` seconds from now (the index lists news pages
        too, and new articles should show within minutes).
        """
        now = timezone.now()
        cap = now.timestamp() + self.cache_timeout if self.cache_timeout is not None else None
        oldest = self.get_queryset().aggregate(oldest=Min(self.publication_date_field))["oldest"]
        if oldest is None:
            return cap
        ages_out = (news_moment(oldest) + NEWS_MAX_AGE).timestamp()
        return ages_out if cap is None else min(cap, ages_out)
