"""The record a source streams to the writer."""

from collections.abc import Iterator

from django_sitemapx import Alternate, Entry, Extras, SkipCounter, Skipped, SkipReason
from django_sitemapx.entries import EntryStream, PlainChunk, close_stream, interleave


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


def test_a_skip_counter_gives_one_record_per_reason_in_the_order_first_counted() -> None:
    counter = SkipCounter()
    counter.count(SkipReason.TOO_LONG)
    counter.count(SkipReason.INVALID_PRIORITY)
    counter.count(SkipReason.TOO_LONG, 3)
    assert counter.flush() == [
        Skipped(SkipReason.TOO_LONG, 4),
        Skipped(SkipReason.INVALID_PRIORITY, 1),
    ]


def test_a_skip_counter_starts_again_from_zero_after_each_flush() -> None:
    # A source flushes after each chunk: a reason counted before is not streamed twice.
    counter = SkipCounter()
    assert counter.flush() == []
    counter.count(SkipReason.TOO_LONG)
    assert counter.flush() == [Skipped(SkipReason.TOO_LONG, 1)]
    assert counter.flush() == []
    counter.count(SkipReason.TOO_LONG, 2)
    assert counter.flush() == [Skipped(SkipReason.TOO_LONG, 2)]


def test_a_skip_counter_is_the_count_callback_a_source_passes_around() -> None:
    counter = SkipCounter()
    count = counter.count

    def stream() -> EntryStream:
        entries = []
        for loc in ("https://e.com/a", "", "https://e.com/b", ""):
            if loc:
                entries.append(Entry(loc))
            else:
                count(SkipReason.MISSING_VALUE)
        yield entries
        yield from counter.flush()

    assert list(stream()) == [
        [Entry("https://e.com/a"), Entry("https://e.com/b")],
        Skipped(SkipReason.MISSING_VALUE, 2),
    ]


def test_interleave_puts_each_rows_values_between_the_literals() -> None:
    assert interleave(["x"], [], 2) == ["x", "x"]
    for width in range(1, 6):
        literals = [f"<{n}>" for n in range(width + 1)]
        values = [[f"r{row}c{column}" for row in range(3)] for column in range(width)]
        expected = [
            literals[0] + "".join(values[c][row] + literals[c + 1] for c in range(width))
            for row in range(3)
        ]
        assert interleave(literals, values, 3) == expected


def test_a_plain_chunk_gives_the_entries_it_holds() -> None:
    chunk = PlainChunk(
        2, ("https://e.com/", "/"), (["a", "b"],), ["2024", "2025"], None, "daily", None
    )
    assert len(chunk) == 2
    assert chunk.locations() == ["https://e.com/a/", "https://e.com/b/"]
    assert chunk.entries() == [
        Entry("https://e.com/a/", "2024", "daily"),
        Entry("https://e.com/b/", "2025", "daily"),
    ]
    fixed = PlainChunk(1, ("https://e.com/",), (), None, "2024", None, "0.5")
    assert fixed.entries() == [Entry("https://e.com/", "2024", None, "0.5")]


def test_close_stream_closes_what_can_be_closed_and_leaves_the_rest() -> None:
    finished: list[bool] = []

    def stream() -> Iterator[bytes]:
        try:
            yield b"a"
            yield b"b"
        finally:
            finished.append(True)

    started = stream()
    next(started)
    close_stream(started)
    assert finished == [True]
    close_stream(iter([b"a"]))  # a list iterator has no close(): nothing to do
