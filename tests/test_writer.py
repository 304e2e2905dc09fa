"""The writer: escaping, extension elements, limits, and golden output."""

import itertools
from dataclasses import replace
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from django_sitemapx.conf import PROTOCOL_MAX_BYTES
from django_sitemapx.entries import Alternate, Entry, Extras, PlainChunk, RenderedChunk
from django_sitemapx.writer import (
    NEAR_SHARE,
    SITEMAP_NAMESPACE,
    URLSET_CLOSE,
    XHTML_NAMESPACE,
    has_illegal_xml_chars,
    index_writer,
    plain_url_elements,
    sitemap_element,
    url_elements,
    url_template,
    urlset_open,
    urlset_writer,
)
from tests.conftest import NS, locs, validate_sitemap

XHTML = {"xhtml": XHTML_NAMESPACE}


def _element(entry: Entry) -> str:
    [element] = url_elements([entry])
    return element


def test_loc_escapes_all_five_entities() -> None:
    assert _element(Entry("""https://e.com/a&b<c>d'e"f""")) == (
        "<url><loc>https://e.com/a&amp;b&lt;c&gt;d&apos;e&quot;f</loc></url>\n"
    )
    assert sitemap_element("""https://e.com/a&b<c>d'e"f""", None) == (
        "<sitemap><loc>https://e.com/a&amp;b&lt;c&gt;d&apos;e&quot;f</loc></sitemap>\n"
    )


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x08", "\x0b", "\x1f", "\ufffe", "\ud800"])
def test_elements_with_xml_illegal_characters_never_reach_the_document(char: str) -> None:
    assert has_illegal_xml_chars(f"a{char}b")
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        url_elements([Entry("https://e.com/ok"), Entry(f"https://e.com/a{char}b")])
    )
    data += writer.close()
    assert locs(validate_sitemap(data)) == ["https://e.com/ok"]
    assert writer.stats.skipped == {"illegal_characters": 1}


def test_tab_newline_and_non_ascii_are_legal() -> None:
    assert not has_illegal_xml_chars("a\tb\nc\rd é ☃ \U0001f600")


@pytest.mark.parametrize("text", ["plain ascii", "with é"])
def test_every_c0_control_but_tab_newline_and_return_is_illegal(text: str) -> None:
    for code in range(0x20):
        assert has_illegal_xml_chars(f"{text}{chr(code)}") is (code not in (0x09, 0x0A, 0x0D))
    assert not has_illegal_xml_chars(f"{text}\x7f")


def test_golden_urlset() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        url_elements(
            [
                Entry("https://example.com/a?x=1&y='2'", "2024-05-01", "daily", "0.5"),
                Entry("https://example.com/b"),
            ]
        )
    )
    data += writer.close()
    assert data == (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<url><loc>https://example.com/a?x=1&amp;y=&apos;2&apos;</loc>"
        b"<lastmod>2024-05-01</lastmod><changefreq>daily</changefreq>"
        b"<priority>0.5</priority></url>\n"
        b"<url><loc>https://example.com/b</loc></url>\n"
        b"</urlset>\n"
    )
    validate_sitemap(data)
    assert writer.stats.urls == 2
    assert writer.stats.bytes == len(data)


def test_golden_index() -> None:
    writer = index_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        [
            sitemap_element("https://example.com/sitemap-a-1.xml", "2024-05-01T00:00:00+00:00"),
            sitemap_element("https://example.com/sitemap-b-1.xml?x=1&y=2", None),
        ]
    )
    data += writer.close()
    assert data == (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<sitemap><loc>https://example.com/sitemap-a-1.xml</loc>"
        b"<lastmod>2024-05-01T00:00:00+00:00</lastmod></sitemap>\n"
        b"<sitemap><loc>https://example.com/sitemap-b-1.xml?x=1&amp;y=2</loc></sitemap>\n"
        b"</sitemapindex>\n"
    )
    root = validate_sitemap(data)
    assert root.tag == f"{{{SITEMAP_NAMESPACE}}}sitemapindex"


def test_every_shape_of_entry_is_written_the_same_in_any_chunk() -> None:
    # One f-string writes entries with all three values; the others go element
    # by element, and a chunk is escaped only if one of its locs needs it.
    entries = [
        Entry("https://e.com/a", "2024-01-01", "daily", "0.5"),
        Entry("https://e.com/b?x=1&y='2'", None, "weekly", None),
        Entry("https://e.com/c", "2024-01-02", None, "1.0"),
        Entry("https://e.com/d"),
        Entry("https://e.com/e&f", "2024-01-03", "never", "0.0"),
    ]
    expected = [
        "<url><loc>https://e.com/a</loc><lastmod>2024-01-01</lastmod>"
        "<changefreq>daily</changefreq><priority>0.5</priority></url>\n",
        "<url><loc>https://e.com/b?x=1&amp;y=&apos;2&apos;</loc>"
        "<changefreq>weekly</changefreq></url>\n",
        "<url><loc>https://e.com/c</loc><lastmod>2024-01-02</lastmod>"
        "<priority>1.0</priority></url>\n",
        "<url><loc>https://e.com/d</loc></url>\n",
        "<url><loc>https://e.com/e&amp;f</loc><lastmod>2024-01-03</lastmod>"
        "<changefreq>never</changefreq><priority>0.0</priority></url>\n",
    ]
    assert url_elements(entries) == expected
    assert [_element(entry) for entry in entries] == expected
    # Plain 5-tuples (what ModelSource builds with zip()) are entries too.
    assert url_elements([tuple(entry) for entry in entries]) == expected  # type: ignore[misc]


def test_writer_stops_at_the_url_limit_and_counts_the_rest() -> None:
    writer = urlset_writer(max_urls=3, max_bytes=10_000)
    first = writer.render(url_elements([Entry(f"https://e.com/{i}") for i in range(2)]))
    second = writer.render(url_elements([Entry(f"https://e.com/x{i}") for i in range(5)]))
    data = first + second + writer.close()
    root = validate_sitemap(data)
    assert len(root) == 3
    assert writer.stats.skipped == {"over_url_limit": 4}


def test_writer_keeps_under_the_byte_limit() -> None:
    [element] = url_elements([Entry("https://e.com/" + "a" * 80)])
    writer = urlset_writer(max_urls=1000, max_bytes=1_000)
    data = writer.render([element] * 20) + writer.render([element]) + writer.close()
    assert len(data) <= 1_000
    root = validate_sitemap(data)
    kept = len(root)
    assert 0 < kept < 20
    assert writer.stats.skipped["over_size_limit"] == 21 - kept
    assert writer.stats.bytes == len(data)


def test_writer_with_nothing_written_produces_nothing() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    assert writer.render([]) == b""
    assert writer.close() == b""


def test_elements_with_illegal_characters_from_custom_sources_are_dropped() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        url_elements([Entry("https://e.com/ok"), Entry("https://e.com/bad", "2024-01-01\x00")])
    )
    data += writer.close()
    assert len(validate_sitemap(data)) == 1
    assert writer.stats.skipped == {"illegal_characters": 1}


# -- extras: alternates as xhtml:link -----------------------------------------------


def test_alternates_are_written_as_xhtml_links_and_validate() -> None:
    alternates = (
        Alternate("en", "https://example.com/en/a?x=1&y='2'"),
        Alternate("fr", "https://example.com/fr/caf%C3%A9/"),
    )
    entries = [
        Entry("https://example.com/en/a", "2024-05-01", "daily", "0.5", Extras(alternates)),
        Entry("https://example.com/plain"),
        Entry("https://example.com/b", extras=Extras((alternates[1],))),
    ]
    writer = urlset_writer(max_urls=10, max_bytes=10_000, namespaces=XHTML)
    data = writer.render_entries(entries)
    data += writer.close()
    assert data.startswith(
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        b'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
    )
    assert (
        b"<url><loc>https://example.com/en/a</loc><lastmod>2024-05-01</lastmod>"
        b"<changefreq>daily</changefreq><priority>0.5</priority>"
        b'<xhtml:link rel="alternate" hreflang="en" '
        b'href="https://example.com/en/a?x=1&amp;y=&apos;2&apos;"/>'
        b'<xhtml:link rel="alternate" hreflang="fr" href="https://example.com/fr/caf%C3%A9/"/>'
        b"</url>\n"
    ) in data
    root = validate_sitemap(data)
    links = root.findall(".//xhtml:link", XHTML)
    assert [(link.get("rel"), link.get("hreflang"), link.get("href")) for link in links] == [
        ("alternate", "en", "https://example.com/en/a?x=1&y='2'"),
        ("alternate", "fr", "https://example.com/fr/caf%C3%A9/"),
        ("alternate", "fr", "https://example.com/fr/caf%C3%A9/"),
    ]
    [first, plain, last] = root.iterfind("sm:url", NS)
    assert len(first) == 6 and len(plain) == 1 and len(last) == 2


def test_hreflang_and_href_are_escaped() -> None:
    entry = Entry("https://e.com/a", extras=Extras((Alternate("""x"&<>'""", """h"&<>'"""),)))
    [element] = url_elements([entry], xhtml_declared=True)
    assert element == (
        "<url><loc>https://e.com/a</loc>"
        '<xhtml:link rel="alternate" hreflang="x&quot;&amp;&lt;&gt;&apos;" '
        'href="h&quot;&amp;&lt;&gt;&apos;"/></url>\n'
    )
    # Read back, the attributes are what the source gave.
    wrapped = f'<urlset xmlns:xhtml="{XHTML_NAMESPACE}">{element}</urlset>'
    [link] = etree.fromstring(wrapped.encode()).iter(f"{{{XHTML_NAMESPACE}}}link")
    assert (link.get("hreflang"), link.get("href")) == ("""x"&<>'""", """h"&<>'""")


def test_a_chunks_entries_are_written_as_each_alone_whatever_the_others_hold() -> None:
    # The chunk's alternates are checked for characters to escape at once: one
    # entry needing it, or carrying images too, changes no other entry's element.
    plain = Entry(
        "https://e.com/a", "2024-01-01", extras=Extras((Alternate("en", "https://e.com/a"),))
    )
    escaped = Entry("https://e.com/b", extras=Extras((Alternate("en", "https://e.com/b?x&y"),)))
    imaged = Entry(
        "https://e.com/c",
        extras=Extras((Alternate("fr", "https://e.com/c"),), images=("https://e.com/c.png",)),
    )
    entries = [plain, escaped, imaged, plain]
    for declared in (True, False):
        alone = [url_elements([entry], xhtml_declared=declared)[0] for entry in entries]
        assert url_elements(entries, xhtml_declared=declared) == alone
        assert url_elements([plain, imaged], xhtml_declared=declared) == [alone[0], alone[2]]
    assert 'href="https://e.com/b?x&amp;y"/>' in alone[1]
    assert "<image:loc>https://e.com/c.png</image:loc>" in alone[2]


def test_links_declare_xhtml_themselves_when_the_root_does_not() -> None:
    entry = Entry("https://e.com/a", extras=Extras((Alternate("en", "https://e.com/a"),)))
    assert _element(entry) == (
        "<url><loc>https://e.com/a</loc>"
        f'<xhtml:link xmlns:xhtml="{XHTML_NAMESPACE}" rel="alternate" hreflang="en" '
        'href="https://e.com/a"/></url>\n'
    )
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    validate_sitemap(writer.render_entries([entry]) + writer.close())


def test_empty_extras_write_no_extension_element() -> None:
    entry = Entry("https://e.com/a", "2024-01-01", "daily", "0.5")
    assert _element(entry._replace(extras=Extras())) == _element(entry)


def test_a_document_without_extras_declares_no_xhtml_namespace() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(url_elements([Entry("https://e.com/a", "2024-01-01", "daily", "0.5")]))
    data += writer.close()
    root = validate_sitemap(data)
    assert root.nsmap == {None: SITEMAP_NAMESPACE}
    assert b"xmlns:xhtml" not in data and XHTML_NAMESPACE.encode() not in data


# Text a PlainChunk may hold: nothing the writer escapes (its maker vouches for
# that), but anything else, XML-illegal characters included.
_unescaped = st.text(st.characters(exclude_characters="&<>'\""), max_size=12)


@st.composite
def plain_chunks(draw: st.DrawFn) -> PlainChunk:
    count = draw(st.integers(0, 6))
    width = draw(st.integers(0, 4))
    columns = tuple(
        draw(st.lists(_unescaped, min_size=count, max_size=count)) for _ in range(width)
    )
    column_of_lastmods = draw(st.booleans())
    lastmods = draw(st.lists(_unescaped, min_size=count, max_size=count))
    return PlainChunk(
        count,
        tuple(draw(st.lists(_unescaped, min_size=width + 1, max_size=width + 1))),
        columns,
        lastmods if column_of_lastmods else None,
        None if column_of_lastmods else draw(st.none() | _unescaped),
        draw(st.none() | st.sampled_from(["daily", "never"])),
        draw(st.none() | st.sampled_from(["0.5", "1.0"])),
    )


@given(plain_chunks(), st.integers(1, 8), st.integers(60, 400))
def test_a_plain_chunk_is_written_as_its_entries_are(
    chunk: PlainChunk, max_urls: int, max_element_bytes: int
) -> None:
    assert plain_url_elements(chunk) == url_elements(chunk.entries())
    writers = [
        urlset_writer(max_urls=max_urls, max_bytes=2_000, max_element_bytes=max_element_bytes)
        for _ in range(2)
    ]
    as_columns, as_entries = writers
    assert as_columns.render_entries(chunk) == as_entries.render_entries(chunk.entries())
    assert as_columns.stats == as_entries.stats


@given(
    st.none() | st.sampled_from(["daily", "never"]),
    st.none() | st.sampled_from(["0.5", "1.0"]),
    st.lists(st.sampled_from(["en", "fr", "de-ch", "x-default"]), max_size=4),
    st.booleans(),
    st.data(),
)
def test_a_url_template_filled_in_is_the_element_url_elements_writes(
    changefreq: str | None,
    priority: str | None,
    hreflangs: list[str],
    declared: bool,
    data: st.DataObject,
) -> None:
    namespaces = {"xhtml"} if declared else set()
    literals = url_template(changefreq, priority, hreflangs, declared=namespaces)
    assert len(literals) == 3 + len(hreflangs)
    loc, lastmod = data.draw(_unescaped), data.draw(_unescaped)
    hrefs = data.draw(st.lists(_unescaped, min_size=len(hreflangs), max_size=len(hreflangs)))
    values = [loc, lastmod, *hrefs]
    filled = literals[0] + "".join(v + t for v, t in zip(values, literals[1:], strict=True))
    alternates = tuple(Alternate(*link) for link in zip(hreflangs, hrefs, strict=True))
    extras = Extras(alternates=alternates) if alternates else None
    entry = (loc, lastmod, changefreq, priority, extras)
    assert [filled] == url_elements([entry], declared=namespaces)


def _rendered(entries: list[Entry], declared: frozenset[str], legal: bool = True) -> RenderedChunk:
    elements = url_elements(entries, declared=declared)
    return RenderedChunk(elements, lambda: list(entries), declared, legal)


def test_a_rendered_chunk_is_written_as_it_is_where_the_root_declares_its_prefixes() -> None:
    extras = Extras(
        alternates=(Alternate("en", "https://e.x/"), Alternate("fr", "https://e.x/fr/"))
    )
    entries = [Entry("https://e.x/", "2026-01-01", None, None, extras), Entry("https://e.x/b")]
    declaring = urlset_writer(max_urls=10, max_bytes=10_000, namespaces=XHTML)
    chunk = _rendered(entries, frozenset({"xhtml"}))
    # Elements that are not the entries' would show: the writer takes them as they are.
    chunk.elements[1] = chunk.elements[1].replace("/b<", "/c<")
    data = declaring.render_entries(chunk)
    assert b"https://e.x/c<" in data and declaring.stats.urls == 2
    # A root declaring less than the chunk's elements assume: its entries are written.
    plain = urlset_writer(max_urls=10, max_bytes=10_000)
    data = plain.render_entries(chunk)
    assert b"https://e.x/b<" in data and f'xmlns:xhtml="{XHTML_NAMESPACE}"'.encode() in data
    validate_sitemap(data + plain.close())


def test_a_rendered_chunk_is_kept_within_the_limits_and_checked_unless_vouched_legal() -> None:
    entries = [Entry(f"https://e.x/{n}", "2026-01-01") for n in range(5)]
    entries[1] = Entry("https://e.x/\x0b", "2026-01-01")
    writer = urlset_writer(max_urls=4, max_bytes=10_000, max_element_bytes=200)
    data = writer.render_entries(_rendered(entries, frozenset(), legal=False))
    assert writer.stats.urls == 3 and b"\x0b" not in data
    assert writer.stats.skipped == {"illegal_characters": 1, "over_url_limit": 1}


def test_a_plain_chunk_with_an_illegal_character_loses_that_url() -> None:
    chunk = PlainChunk(
        2,
        ("https://e.com/", ""),
        (["a", "b"],),
        ["2024-01-01", "2024-01-\x0102"],
        None,
        None,
        None,
    )
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render_entries(chunk) + writer.close()
    assert locs(validate_sitemap(data)) == ["https://e.com/a"]
    assert writer.stats.skipped == {"illegal_characters": 1}


# -- where a page that goes over its byte limit fits, measured ---------------------------


@given(st.lists(st.text(alphabet="aé€", min_size=1, max_size=40), min_size=1, max_size=60))
def test_urls_within_says_how_many_elements_fit_as_measured(texts: list[str]) -> None:
    elements = [f"<url><loc>{text}</loc></url>\n" for text in texts]
    writer = urlset_writer(max_urls=50_000, max_bytes=4_000)
    for start in range(0, len(elements), 7):
        writer.render(elements[start : start + 7])
    closing = len(URLSET_CLOSE.encode())
    head = len(urlset_open(None, None).encode())
    ends = list(itertools.accumulate((len(e.encode()) for e in elements), initial=head))[1:]
    for size in range(head + closing, writer.stats.bytes + closing + 50, 97):
        found = writer.urls_within(size)
        if found is None:  # below what was measured (under 85% of the limit)
            assert size < NEAR_SHARE * 4_000 + closing + 50
            continue
        written = min(len(elements), writer.stats.urls)
        assert found == sum(1 for end in ends[:written] if end + closing <= size)


def test_the_real_50_mb_limit_is_kept_and_measured_where_95_percent_ends() -> None:
    element = "<url><loc>https://example.com/" + "p" * 1_150 + "</loc></url>\n"
    writer = urlset_writer(max_urls=50_000, max_bytes=PROTOCOL_MAX_BYTES)
    written = 0
    while not writer.overflowed:
        written += len(writer.render([element] * 2_000))
    written += len(writer.close())
    assert written == writer.stats.bytes <= PROTOCOL_MAX_BYTES
    assert writer.stats.bytes > PROTOCOL_MAX_BYTES - len(element)
    # The rows that fit in 95% of 50 MB, to the element.
    target = int(0.95 * PROTOCOL_MAX_BYTES)
    head, closing = len(urlset_open(None, None).encode()), len(URLSET_CLOSE.encode())
    assert writer.urls_within(target) == (target - head - closing) // len(element)


def test_a_chunk_vouched_legal_is_scanned_only_for_what_its_rows_share() -> None:
    # Its maker proved each row's values legal (sources.rows): scanning the whole
    # chunk again for XML-illegal characters was most of the writer's own cost.
    rows = 2_000
    chunk = PlainChunk(
        rows,
        ("https://e.com/", "/"),
        ([f"slug-{n}" for n in range(rows)],),
        ["2024-01-01T10:00:00+00:00"] * rows,
        None,
        "daily",
        "0.5",
        legal=True,
    )
    scanned: list[str] = []

    def scan(text: str) -> bool:
        scanned.append(text)
        return has_illegal_xml_chars(text)

    writer = urlset_writer(max_urls=50_000, max_bytes=50_000_000, max_element_bytes=3_000)
    with mock.patch("django_sitemapx.writer.has_illegal_xml_chars", side_effect=scan):
        data = writer.render_entries(chunk) + writer.close()
    assert scanned == ["https://e.com//daily0.5"]
    assert len(locs(validate_sitemap(data))) == rows
    # Unvouched, the same chunk is scanned whole: the same bytes either way.
    plain = urlset_writer(max_urls=50_000, max_bytes=50_000_000, max_element_bytes=3_000)
    assert plain.render_entries(replace(chunk, legal=False)) + plain.close() == data


def test_a_chunk_vouched_legal_with_an_illegal_shared_value_is_checked_whole() -> None:
    chunk = PlainChunk(
        2, ("https://e.com/\x01", ""), (["a", "b"],), None, "2024-01-01", None, None, legal=True
    )
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    assert writer.render_entries(chunk) == b""
    assert writer.stats.skipped == {"illegal_characters": 2}
