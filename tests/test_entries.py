"""The record a source streams to the writer."""

from django_sitemapx import Alternate, Entry, Extras, Skipped, SkipReason


def test_an_entry_needs_only_its_location() -> None:
    assert Entry("https://e.com/") == ("https://e.com/", None, None, None, None)


def test_a_plain_tuple_is_an_entry() -> None:
    # The hot path builds entries with zip(): the writer must read them the same way.
    entry = Entry("https://e.com/", "2024-01-01", "daily", "0.5")
    assert (entry.loc, entry.extras) == ("https://e.com/", None)
    assert entry == ("https://e.com/", "2024-01-01", "daily", "0.5", None)


def test_extras_carry_alternates_and_are_empty_by_default() -> None:
    assert not Extras().alternates
    extras = Extras((Alternate("en", "https://e.com/en/"),))
    assert extras.alternates[0].hreflang == "en"


def test_skipped_counts_one_by_default() -> None:
    assert Skipped(SkipReason.TOO_LONG) == (SkipReason.TOO_LONG, 1)
    assert Skipped(SkipReason.TOO_LONG, 3).total == 3
