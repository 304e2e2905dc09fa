"""Image, video and news values and elements: validation, escaping, schema validity."""

import dataclasses
import datetime
from decimal import Decimal
from typing import Any

import pytest
from lxml import etree

from django_sitemapx.entries import Entry, Extras, NewsElement, VideoElement
from django_sitemapx.exceptions import InvalidValue
from django_sitemapx.extensions.values import (
    IMAGE_ELEMENT_BYTES,
    NEWS_ELEMENT_BYTES,
    VIDEO_ELEMENT_BYTES,
    News,
    Publication,
    Video,
    media_uri,
    news_element,
    video_element,
)
from django_sitemapx.locations import LocationBuilder, Origin
from django_sitemapx.writer import (
    IMAGE_NAMESPACE,
    NEWS_NAMESPACE,
    URLSET_CLOSE,
    VIDEO_NAMESPACE,
    url_elements,
    urlset_open,
    urlset_writer,
)
from tests.conftest import validate_sitemap

BUILDER = LocationBuilder(Origin("https", "example.com"))
NOW = datetime.datetime(2024, 5, 3, 10, 0, tzinfo=datetime.UTC)
HOSTILE = """Tom & Jerry <b>"quoted"</b> 'apos' ]]> \u00e9\u4e2d\U0001f600"""
ALL_NAMESPACES = {"image": IMAGE_NAMESPACE, "video": VIDEO_NAMESPACE, "news": NEWS_NAMESPACE}
V = "{" + VIDEO_NAMESPACE + "}"


def _document(entries: list[Entry], namespaces: dict[str, str] | None = None) -> bytes:
    namespaces = ALL_NAMESPACES if namespaces is None else namespaces
    writer = urlset_writer(max_urls=50_000, max_bytes=52_428_800, namespaces=namespaces)
    return writer.render_entries(entries) + writer.close()


def _full_video(**changes: Any) -> Video:
    values: dict[str, Any] = {
        "thumbnail_loc": "/thumbs/1.jpg",
        "title": "Grilling steaks",
        "description": "How to grill.",
        "content_loc": "https://cdn.example.net/v/1.mp4",
        "player_loc": "/player?v=1&autoplay=0",
        "duration": 600,
        "expiration_date": datetime.date(2030, 1, 1),
        "rating": 4.2,
        "view_count": 12345,
        "publication_date": datetime.datetime(2024, 5, 1, 8, 0, tzinfo=datetime.UTC),
        "tags": ["steak", "meat"],
        "family_friendly": True,
        "restriction": ("allow", ["ie", "GB", "US"]),
        "platform": ("deny", "tv mobile"),
        "requires_subscription": False,
        "uploader": "GrillyMcGrillerson",
        "uploader_info": "/users/grilly",
        "live": False,
    }
    values.update(changes)
    return Video(**values)


# -- images --------------------------------------------------------------------------


def test_image_paths_are_made_absolute_and_other_hosts_kept() -> None:
    assert media_uri(BUILDER, "/img/a b.jpg", "image") == "https://example.com/img/a%20b.jpg"
    # Images are often on a CDN: Google accepts another host.
    assert media_uri(BUILDER, "https://cdn.example.net/é.png", "image") == (
        "https://cdn.example.net/%C3%A9.png"
    )
    assert media_uri(BUILDER, "https://bücher.example/x.png", "image") == (
        "https://xn--bcher-kva.example/x.png"
    )


@pytest.mark.parametrize(
    ("given", "written"),
    [
        # Already a URI: kept as it is (the common case, and the fast one).
        ("https://cdn.example.net/img/1/0.jpg", "https://cdn.example.net/img/1/0.jpg"),
        (
            "http://cdn.example.net:8080/a_b~c.jpg?w=1&h=2",
            "http://cdn.example.net:8080/a_b~c.jpg?w=1&h=2",
        ),
        ("https://cdn.example.net", "https://cdn.example.net"),
        # Anything else goes through the full rules.
        ("HTTPS://cdn.example.net/x.jpg", "https://cdn.example.net/x.jpg"),
        ("https://cdn.example.net/a b.jpg", "https://cdn.example.net/a%20b.jpg"),
        ("https://cdn.example.net/a%20b.jpg", "https://cdn.example.net/a%20b.jpg"),
        ('https://cdn.example.net/a"b.jpg', "https://cdn.example.net/a%22b.jpg"),
    ],
)
def test_absolute_image_urls_are_kept_or_encoded(given: str, written: str) -> None:
    assert media_uri(BUILDER, given, "image") == written


def test_an_absolute_image_url_over_the_length_limit_is_refused() -> None:
    longest = "https://cdn.example.net/" + "a" * (2047 - len("https://cdn.example.net/"))
    assert media_uri(BUILDER, longest, "image") == longest
    with pytest.raises(InvalidValue):
        media_uri(BUILDER, longest + "a", "image")


@pytest.mark.parametrize(
    "bad",
    [
        "",
        None,
        42,
        "img.jpg",  # relative
        "//cdn.example.net/x.jpg",
        "ftp://example.com/x.jpg",
        "javascript:alert(1)",
        "/a\x00b.jpg",
        "/a\nb.jpg",
        "/" + "a" * 2047,  # over 2,047 characters once absolute
        "https://",
    ],
)
def test_bad_image_locations_are_refused(bad: Any) -> None:
    with pytest.raises(InvalidValue):
        media_uri(BUILDER, bad, "image")


def test_images_are_escaped_and_valid() -> None:
    uri = media_uri(BUILDER, "/img?a=1&b='2'", "image")
    entry = Entry("https://example.com/p", extras=Extras(images=(uri, uri)))
    data = _document([entry], {"image": IMAGE_NAMESPACE})
    root = validate_sitemap(data)
    locs = root.findall(f".//{{{IMAGE_NAMESPACE}}}loc")
    assert [loc.text for loc in locs] == ["https://example.com/img?a=1&b='2'"] * 2
    assert b"&amp;b=&apos;2&apos;" in data


# What a URI may not hold as it is (#28): "[" and "]" outside an IPv6 host, a "%"
# that starts no escape, a second "#". Image and video URLs follow <loc>'s rule.
HOSTILE_MEDIA = [
    "https://cdn.example.net/a[1].jpg",
    "https://cdn.example.net/a]b.jpg",
    "https://cdn.example.net/100%.jpg",
    "https://cdn.example.net/%zz.jpg",
    "https://cdn.example.net/%4.jpg",
    "https://cdn.example.net/a.jpg#x#y",
    "https://cdn.example.net/a.jpg##",
    "https://cdn.example.net?w=[1]&h=%",
    "https://cdn.example.net#a#b",
    "https://cdn.example.net/a b[1]%#c#d",
    "https://[::1]:8080/a[b].jpg",
    "HTTPS://cdn.example.net/é[1]%.jpg",
    "/img/a[1].jpg",
    "/img/100%.jpg",
    "/img/a.jpg#x#y",
    "/img/[]%#[]%#",
    "/img/%%%",
    "/img/a\\b^`{|}.jpg",
]


@pytest.mark.parametrize("given", HOSTILE_MEDIA)
def test_image_and_video_urls_follow_the_loc_rule_and_validate(given: str) -> None:
    uri = media_uri(BUILDER, given, "image")
    assert uri == BUILDER.absolute(given) if given.startswith("/") else uri.isascii()
    assert not {"[", "]"} & set(uri.partition("://")[2].partition("/")[2])
    assert uri.count("#") <= 1
    video, _ = video_element(
        {
            "thumbnail_loc": given,
            "title": "T",
            "description": "D",
            "content_loc": given,
            "player_loc": given,
        },
        BUILDER,
    )
    entry = Entry("https://example.com/p", extras=Extras(images=(uri,), videos=(video,)))
    root = validate_sitemap(_document([entry]))
    assert root.findtext(f".//{{{IMAGE_NAMESPACE}}}loc") == uri
    assert root.findtext(f".//{V}thumbnail_loc") == uri
    assert root.findtext(f".//{V}content_loc") == uri
    assert root.findtext(f".//{V}player_loc") == uri


def test_an_image_needs_its_namespace_only_where_used() -> None:
    plain = _document([Entry("https://example.com/p")], {})
    assert b"sitemap-image" not in plain
    entry = Entry("https://example.com/p", extras=Extras(images=("https://example.com/i.png",)))
    # A root that does not declare the prefix: the element declares it itself.
    root = validate_sitemap(_document([entry], {}))
    assert root.find(f".//{{{IMAGE_NAMESPACE}}}loc") is not None


# -- videos --------------------------------------------------------------------------


def test_a_full_video_is_written_in_schema_order() -> None:
    element, extra_tags = video_element(_full_video(), BUILDER)
    assert extra_tags == 0
    assert element.restriction == ("allow", "IE GB US")
    assert element.platform == ("deny", "tv mobile")
    assert element.rating == "4.2"
    assert element.player_loc == "https://example.com/player?v=1&autoplay=0"
    entry = Entry("https://example.com/watch", extras=Extras(videos=(element,)))
    root = validate_sitemap(_document([entry], {"video": VIDEO_NAMESPACE}))
    video = root.find(f".//{V}video")
    assert video is not None
    assert [etree.QName(child).localname for child in video] == [
        "thumbnail_loc",
        "title",
        "description",
        "content_loc",
        "player_loc",
        "duration",
        "expiration_date",
        "rating",
        "view_count",
        "publication_date",
        "tag",
        "tag",
        "family_friendly",
        "restriction",
        "requires_subscription",
        "uploader",
        "platform",
        "live",
    ]
    assert video.find(f"{V}uploader").get("info") == "https://example.com/users/grilly"
    assert video.find(f"{V}family_friendly").text == "yes"


def test_the_two_video_records_and_the_writer_agree_field_by_field() -> None:
    # Video (what a source gives), VideoElement (what the writer reads) and the
    # writer's element order change together; VIDEO_ELEMENT_BYTES bounds what
    # they write (test_element_bounds_hold_for_the_largest_values).
    assert {field.name for field in dataclasses.fields(Video)} == set(VideoElement._fields)
    pairs = {"restriction": ("allow", "GB"), "platform": ("deny", "tv")}
    values: dict[str, Any] = {
        name: pairs.get(name, ("a-tag",) if name == "tags" else f"{name}-value")
        for name in VideoElement._fields
    }
    element = VideoElement(**values)
    entry = Entry("https://example.com/watch", extras=Extras(videos=(element,)))
    document = urlset_open({"video": VIDEO_NAMESPACE}) + url_elements([entry])[0] + URLSET_CLOSE
    video = etree.fromstring(document.encode()).find(f".//{V}video")
    assert video is not None
    # Every field is written, in the record's order: the tags as <tag>s, the
    # uploader's info as an attribute of <uploader>.
    assert [etree.QName(child).localname for child in video] == [
        "tag" if name == "tags" else name
        for name in VideoElement._fields
        if name != "uploader_info"
    ]
    assert video.find(f"{V}uploader").get("info") == "uploader_info-value"


def test_a_minimal_video_with_a_player_only() -> None:
    element, _ = video_element(
        {"thumbnail_loc": "/t.jpg", "title": "T", "description": "D", "player_loc": "/p"},
        BUILDER,
    )
    entry = Entry("https://example.com/watch", extras=Extras(videos=(element,)))
    validate_sitemap(_document([entry]))


@pytest.mark.parametrize(
    "changes",
    [
        {"content_loc": None, "player_loc": None},
        {"thumbnail_loc": ""},
        {"thumbnail_loc": "not a url"},
        {"title": ""},
        {"title": "   "},
        {"title": "x" * 101},
        {"title": "bell\x07"},
        {"description": "d" * 2049},
        {"description": "nul\x00"},
        {"duration": 0},
        {"duration": 28_801},
        {"duration": -5},
        {"duration": 1.5},
        {"duration": True},
        {"rating": 5.01},
        {"rating": -0.1},
        {"rating": "NaN"},
        {"rating": float("inf")},
        {"rating": "lots"},
        {"view_count": -1},
        {"view_count": "many"},
        {"expiration_date": "tomorrow"},
        {"publication_date": "2024-13-01"},
        {"family_friendly": "yes"},
        {"restriction": ("maybe", ["GB"])},
        {"restriction": ("allow", ["GBR"])},
        {"restriction": "GB"},
        {"platform": ("allow", ["phone"])},
        {"uploader": "u" * 256},
        {"uploader": None, "uploader_info": "/u"},
        {"tags": "one string"},
        {"tags": ["ok", "t" * 257]},
        {"live": 1},
    ],
)
def test_bad_video_values_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(InvalidValue):
        video_element(_full_video(**changes), BUILDER)


def test_unknown_video_fields_are_refused() -> None:
    with pytest.raises(InvalidValue, match="unknown fields"):
        video_element({"thumbnail_loc": "/t", "title": "T", "description": "D", "x": 1}, BUILDER)
    with pytest.raises(InvalidValue):
        video_element(42, BUILDER)


def test_video_limits_at_their_edges_are_valid() -> None:
    element, extra = video_element(
        _full_video(
            duration=28_800,
            rating=Decimal("5.0"),
            view_count=0,
            title="t" * 100,
            description="d" * 2048,
            tags=[f"tag{n}" for n in range(40)],
            uploader="u" * 255,
        ),
        BUILDER,
    )
    assert extra == 8
    assert len(element.tags) == 32
    assert element.rating == "5.0"
    entry = Entry("https://example.com/watch", extras=Extras(videos=(element,)))
    validate_sitemap(_document([entry]))


def test_hostile_video_text_is_escaped_and_valid() -> None:
    element, _ = video_element(
        _full_video(title=HOSTILE[:100], description=HOSTILE, tags=[HOSTILE], uploader=HOSTILE),
        BUILDER,
    )
    entry = Entry("https://example.com/watch", extras=Extras(videos=(element,)))
    root = validate_sitemap(_document([entry]))
    assert root.find(f".//{V}description").text == HOSTILE
    assert root.find(f".//{V}tag").text == HOSTILE


# -- news ----------------------------------------------------------------------------


PUBLICATION = Publication("The Daily & Co <Ltd>", "en")


def test_news_within_two_days_is_written() -> None:
    when = NOW - datetime.timedelta(days=1, hours=23)
    element = news_element(News(title=HOSTILE, publication_date=when), PUBLICATION, NOW)
    assert element == NewsElement(
        "The Daily & Co <Ltd>", "en", "2024-05-01T11:00:00+00:00", HOSTILE
    )
    entry = Entry("https://example.com/n", extras=Extras(news=element))
    root = validate_sitemap(_document([entry], {"news": NEWS_NAMESPACE}))
    n = "{" + NEWS_NAMESPACE + "}"
    assert root.find(f".//{n}title").text == HOSTILE
    assert root.find(f".//{n}name").text == "The Daily & Co <Ltd>"


def test_news_older_than_two_days_is_not_listed() -> None:
    when = NOW - datetime.timedelta(days=2, seconds=1)
    assert news_element(News(title="t", publication_date=when), PUBLICATION, NOW) is None
    edge = NOW - datetime.timedelta(days=2)
    assert news_element(News(title="t", publication_date=edge), PUBLICATION, NOW) is not None


def test_a_news_item_may_name_its_own_publication() -> None:
    value = {"title": "t", "publication_date": NOW, "name": "Other", "language": "zh-tw"}
    element = news_element(value, None, NOW)
    assert element is not None and element.language == "zh-tw"


@pytest.mark.parametrize(
    "value",
    [
        {"title": "", "publication_date": NOW},
        {"title": "t" * 2049, "publication_date": NOW},
        {"title": "nul\x00", "publication_date": NOW},
        {"title": "t", "publication_date": "yesterday"},
        {"title": "t", "publication_date": 12},
        {"title": "t", "publication_date": NOW, "language": "english"},
        {"title": "t", "publication_date": NOW, "language": "EN"},
        {"title": "t", "publication_date": NOW, "name": ""},
        {"title": "t"},
        "news",
    ],
)
def test_bad_news_is_refused(value: Any) -> None:
    with pytest.raises(InvalidValue):
        news_element(value, PUBLICATION, NOW)


def test_a_publication_is_checked_when_made() -> None:
    with pytest.raises(InvalidValue):
        Publication("Name", "en-GB")
    with pytest.raises(InvalidValue):
        Publication("", "en")


# -- the schemas really check extension elements ---------------------------------------


@pytest.mark.parametrize(
    "element",
    [
        "<video:video><video:title>no thumbnail</video:title></video:video>",
        "<image:image><image:caption>no loc</image:caption></image:image>",
        "<news:news><news:title>no publication</news:title></news:news>",
        "<video:unknown/>",
    ],
)
def test_validate_sitemap_refuses_invalid_extension_elements(element: str) -> None:
    # The sitemap schema takes extension elements with processContents="strict":
    # the test helper imports their schemas, so a wrong one fails validation.
    namespaces = {"image": IMAGE_NAMESPACE, "video": VIDEO_NAMESPACE, "news": NEWS_NAMESPACE}
    data = (
        urlset_open(namespaces) + f"<url><loc>https://example.com/</loc>{element}</url>\n"
    ) + URLSET_CLOSE
    with pytest.raises(AssertionError, match="invalid urlset"):
        validate_sitemap(data.encode())


def test_video_rating_out_of_range_fails_the_schema() -> None:
    element, _ = video_element(_full_video(), BUILDER)
    entry = Entry("https://example.com/w", extras=Extras(videos=(element._replace(rating="6"),)))
    with pytest.raises(AssertionError):
        validate_sitemap(_document([entry]))


# -- sizes ---------------------------------------------------------------------------


def test_element_bounds_hold_for_the_largest_values() -> None:
    worst_uri = "https://example.com/" + "'" * (2047 - len("https://example.com/"))
    image = url_elements([Entry("https://e.com/", extras=Extras(images=(worst_uri,)))])[0]
    base = len(url_elements([Entry("https://e.com/")])[0].encode())
    assert len(image.encode()) - base <= IMAGE_ELEMENT_BYTES
    worst_text = "\U0001f600"  # four bytes in UTF-8
    video = VideoElement(
        thumbnail_loc=worst_uri,
        title="'" * 100,
        description="'" * 2048,
        content_loc=worst_uri,
        player_loc=worst_uri,
        duration="28800",
        expiration_date="2024-05-01T10:00:00.123456+14:00",
        rating="4.99",
        view_count="9" * 20,
        publication_date="2024-05-01T10:00:00.123456+14:00",
        tags=tuple(worst_text * 256 for _ in range(32)),
        family_friendly="yes",
        restriction=("allow", " ".join(["GB"] * 250)),
        requires_subscription="yes",
        uploader="'" * 255,
        uploader_info=worst_uri,
        platform=("allow", "web mobile tv"),
        live="no",
    )
    rendered = url_elements([Entry("https://e.com/", extras=Extras(videos=(video,)))])[0]
    assert len(rendered.encode()) - base <= VIDEO_ELEMENT_BYTES
    news = NewsElement("'" * 256, "zh-cn", "2024-05-01T10:00:00.123456+14:00", "'" * 2048)
    rendered = url_elements([Entry("https://e.com/", extras=Extras(news=news))])[0]
    assert len(rendered.encode()) - base <= NEWS_ELEMENT_BYTES
