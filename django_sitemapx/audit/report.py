"""What an audit found: findings, the report, its text, JSON and CSV forms, and where it is kept.

The last report is kept in the sitemap cache (``SITEMAPX_CACHE_ALIAS``), as the
skips are (see ``skips``), so a task can store it and the admin's overview read
it from any process. Without a cache nothing is kept. A failing cache is
ignored: the report is still returned and written by the command.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from django.core.cache import caches
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings

logger = logging.getLogger("django_sitemapx")

CACHE_KEY = "django_sitemapx:audit:last"


class Kind:
    """The kinds of finding, each one of Search Console's reasons for not indexing a URL."""

    STATUS = "status"  # "Submitted URL not found (404)" and other errors
    REDIRECT = "redirect"  # "Page with redirect"
    NOINDEX = "noindex"  # "Submitted URL marked 'noindex'"
    CANONICAL = "canonical"  # "Alternate page with proper canonical tag"
    ROBOTS = "robots"  # "Submitted URL blocked by robots.txt"
    DUPLICATE = "duplicate"  # one URL in two sections
    ALTERNATE = "alternate"  # an hreflang alternate that does not answer 200


KINDS = (
    Kind.STATUS,
    Kind.REDIRECT,
    Kind.NOINDEX,
    Kind.CANONICAL,
    Kind.ROBOTS,
    Kind.DUPLICATE,
    Kind.ALTERNATE,
)

# What each kind means, for people (the admin's overview).
KIND_LABELS = {
    Kind.STATUS: _("answers an error"),
    Kind.REDIRECT: _("redirects"),
    Kind.NOINDEX: _("marked noindex"),
    Kind.CANONICAL: _("names another canonical URL"),
    Kind.ROBOTS: _("blocked by robots.txt"),
    Kind.DUPLICATE: _("also in another section"),
    Kind.ALTERNATE: _("an alternate fails"),
}

CSV_FIELDS = ("kind", "section", "url", "status", "target", "target_listed", "detail")


@dataclass(frozen=True)
class Finding:
    """One problem with one listed URL.

    ``target`` is where a redirect leads, the canonical URL, or the alternate
    that failed; ``target_listed`` whether the sitemap lists it (None: not
    applicable). ``detail`` says where the problem was seen, in words.
    """

    kind: str
    section: str
    url: str
    status: int | None = None
    target: str = ""
    target_listed: bool | None = None
    detail: str = ""


@dataclass
class AuditReport:
    """A whole audit: the URLs checked per section, and the findings, in the order found."""

    started: str
    finished: str = ""
    hosts: list[str] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether nothing was found."""
        return not self.findings

    def by_section(self) -> dict[str, dict[str, int]]:
        """Per section checked, the number of findings of each kind (empty: none)."""
        counts: dict[str, Counter[str]] = {section: Counter() for section in self.checked}
        for finding in self.findings:
            counts.setdefault(finding.section, Counter())[finding.kind] += 1
        return {
            section: {kind: counter[kind] for kind in KINDS if counter[kind]}
            for section, counter in counts.items()
        }

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values; :meth:`from_dict` reads it back."""
        return {
            "started": self.started,
            "finished": self.finished,
            "hosts": list(self.hosts),
            "checked": dict(self.checked),
            "findings": [asdict(finding) for finding in self.findings],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditReport:
        """The report :meth:`as_dict` gave."""
        return cls(
            started=data["started"],
            finished=data.get("finished", ""),
            hosts=list(data.get("hosts", [])),
            checked=dict(data.get("checked", {})),
            findings=[Finding(**finding) for finding in data.get("findings", [])],
        )

    def as_json(self) -> str:
        """The report as a JSON document."""
        return json.dumps(self.as_dict(), indent=2, sort_keys=True) + "\n"

    def as_csv(self) -> str:
        """One CSV line per finding, with a header line."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for finding in self.findings:
            row = asdict(finding)
            row["status"] = "" if finding.status is None else finding.status
            row["target_listed"] = (
                "" if finding.target_listed is None else str(finding.target_listed).lower()
            )
            writer.writerow(row)
        return out.getvalue()

    def as_text(self) -> str:
        """The report for people: the findings by section, then the totals."""
        lines: list[str] = []
        for section in self.by_section():
            found = [f for f in self.findings if f.section == section]
            checked = self.checked.get(section, 0)
            lines.append(f"{section}: {checked} URLs checked, {len(found)} problems")
            lines.extend(f"  {describe(finding)}" for finding in found)
        total = sum(self.checked.values())
        lines.append(
            f"{total} URLs checked on {', '.join(self.hosts) or 'no host'}: "
            + (f"{len(self.findings)} problems." if self.findings else "no problem.")
        )
        return "\n".join(lines) + "\n"


def describe(finding: Finding) -> str:
    """One line for people saying what is wrong with a URL."""
    listed = {True: " (listed)", False: " (not listed)", None: ""}[finding.target_listed]
    if finding.kind == Kind.REDIRECT:
        what = f"redirects ({finding.status}) to {finding.target or '?'}{listed}"
    elif finding.kind == Kind.STATUS:
        what = f"answers {finding.status}"
    elif finding.kind == Kind.NOINDEX:
        what = f"is marked noindex ({finding.detail})"
    elif finding.kind == Kind.CANONICAL:
        what = f"names another canonical URL, {finding.target}{listed}"
    elif finding.kind == Kind.ROBOTS:
        what = f"is disallowed by robots.txt ({finding.detail})"
    elif finding.kind == Kind.DUPLICATE:
        what = f"is also listed in {finding.detail}"
    else:
        what = f"has an alternate {finding.target} ({finding.detail}) answering {finding.status}"
    return f"{finding.kind}: {finding.url} {what}"


def store_report(report: AuditReport) -> bool:
    """Keep ``report`` as the last one, for the admin's overview; False if it could not be."""
    alias = app_settings.CACHE_ALIAS
    if alias is None:
        return False
    try:
        caches[alias].set(CACHE_KEY, report.as_dict(), None)
    except Exception:  # a report only: a failing cache must not fail the audit
        logger.warning("Could not keep the sitemap audit's report.", exc_info=True)
        return False
    return True


def last_report() -> AuditReport | None:
    """The last report kept by :func:`store_report`; None if there is none (or no cache)."""
    alias = app_settings.CACHE_ALIAS
    if alias is None:
        return None
    try:
        data = caches[alias].get(CACHE_KEY)
        return None if data is None else AuditReport.from_dict(data)
    except Exception:
        logger.debug("Could not read the sitemap audit's report.", exc_info=True)
        return None
