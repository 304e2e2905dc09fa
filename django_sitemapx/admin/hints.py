"""What the admin says about each value: lastmod first, change frequency and priority as hints.

Google's sitemap documentation says it ignores ``<changefreq>`` and ``<priority>``;
Bing's Webmaster Blog post of July 2025 ("Keeping Content Discoverable with
Sitemaps in AI Powered Search") asks for an accurate ``<lastmod>`` with its time,
and is reported to say Bing ignores the other two (docs/guide/admin.md cites the
post and the reports). The override and rule forms share these texts.
"""

from __future__ import annotations

from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

_ACCURATE = _(
    "The value search engines read: give the time too, and never a date that is not a real "
    "change. Empty: the section's value."
)
HELP_TEXTS: dict[str, Any] = {
    "lastmod": format_lazy(
        "{} {}",
        _(
            "The date and time the page last changed in a way that matters (its main text, "
            "data or links), e.g. after an editorial update the page's own timestamp does "
            "not show."
        ),
        _ACCURATE,
    ),
    "changefreq": _("A hint: Google and Bing say they ignore it. Empty: the section's value."),
    "priority": _(
        "A hint: Google and Bing say they ignore it; 0.0 to 1.0, one decimal. "
        "Empty: the section's value."
    ),
}
RULE_HELP_TEXTS: dict[str, Any] = {
    **HELP_TEXTS,
    "lastmod": format_lazy(
        "{} {}",
        _("The date and time the matching pages last changed in a way that matters."),
        _ACCURATE,
    ),
}

HINTS_FIELDSET: tuple[Any, Any] = (
    _("Hints most search engines ignore"),
    {
        "fields": ("changefreq", "priority"),
        "description": _(
            "Google and Bing say they ignore the change frequency and the priority; other "
            "crawlers may read them. What counts is whether the URL is listed and an "
            "accurate last modification date."
        ),
    },
)
