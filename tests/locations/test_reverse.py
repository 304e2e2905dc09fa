"""Reversing a URL name once: the fields it needs, how rows fill it, and its plain template."""

import pytest
from django.test import override_settings
from django.urls import NoReverseMatch, reverse

from django_sitemapx.exceptions import Skip
from django_sitemapx.locations.reverse import compile_url
from tests.urls_row_locations import NO_PLAIN_TEMPLATE


def fill_or_skip(url_name: str, kwargs: dict[str, str], values: list[object]) -> str:
    try:
        return compile_url(url_name, kwargs).fill(values)
    except Skip as skip:
        return f"skip:{skip.reason}"


def test_fields_come_in_kwargs_order_and_fill_gives_what_reverse_gives() -> None:
    url = compile_url("article-detail", {"slug": "slug", "category": "category__slug"})
    assert url.fields == ["slug", "category__slug"]
    assert url.fill(["a-b", "news"]) == "/articles/news/a-b/"
    assert url.fill(["caf\u00e9 au lait", "news"]) == reverse(
        "article-detail", kwargs={"category": "news", "slug": "caf\u00e9 au lait"}
    )


@pytest.mark.parametrize(
    ("category", "slug", "expected"),
    [
        ("news", None, "skip:missing_value"),
        ("news", "a/b", "skip:no_reverse_match"),
        ("news", "", "skip:no_reverse_match"),
        ("caf\u00e9", "s", "skip:no_reverse_match"),
        ("news", 42, "/articles/news/42/"),
        ("news", "50%", "/articles/news/50%25/"),
    ],
)
def test_fill_skips_exactly_what_reverse_refuses(
    category: object, slug: object, expected: str
) -> None:
    kwargs = {"category": "category__slug", "slug": "slug"}
    assert fill_or_skip("article-detail", kwargs, [category, slug]) == expected
    if slug is None:
        return  # reverse() would write "None": a NULL value is missing, not a slug
    try:
        reversed_ = reverse("article-detail", kwargs={"category": category, "slug": slug})
    except NoReverseMatch:
        assert expected.startswith("skip:")
    else:
        assert reversed_ == expected


def test_a_url_without_arguments() -> None:
    url = compile_url("about", {})
    assert url.fields == []
    assert url.fill([]) == "/about/"
    assert url.plain is not None and url.plain.literals == ["/about/"]


def test_a_name_that_cannot_be_reversed_raises() -> None:
    with pytest.raises(NoReverseMatch):
        compile_url("no-such-url", {"slug": "slug"})
    with pytest.raises(NoReverseMatch):
        compile_url("article-detail", {"slug": "slug"})  # "category" is missing


def test_plain_template_fields_come_in_path_order_whatever_the_kwargs_order() -> None:
    template = compile_url("article-detail", {"slug": "slug", "category": "cat"}).plain
    assert template is not None
    assert template.fields == ["cat", "slug"]
    assert template.literals == ["/articles/", "/", "/"]
    assert template.kinds == ["slug", "str"]


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
def test_plain_template_of_every_built_in_converter() -> None:
    by_int = compile_url("by-int", {"number": "n"}).plain
    assert by_int is not None and (by_int.literals, by_int.kinds) == (["/n/", "/"], ["int"])
    three = compile_url("three", {"c": "c", "a": "a", "b": "b"}).plain
    assert three is not None
    assert three.fields == ["a", "b", "c"]
    assert three.kinds == ["slug", "str", "path"]
    assert three.literals == ["/three/", "/", "/", "/end"]


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
@pytest.mark.parametrize(("url_name", "kwargs"), NO_PLAIN_TEMPLATE)
def test_no_plain_template_where_it_could_differ(url_name: str, kwargs: dict[str, str]) -> None:
    assert compile_url(url_name, kwargs).plain is None


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
def test_patterns_without_a_plain_template_still_fill_like_reverse() -> None:
    rest = compile_url("path-first", {"rest": "rest"})
    assert rest.fill(["/a/b"]) == reverse("path-first", kwargs={"rest": "/a/b"}) == "/%2Fa/b"
    regex = compile_url("regex", {"slug": "slug"})  # reversed row by row
    assert regex.fill(["abc"]) == "/re/abc/"
    assert fill_or_skip("regex", {"slug": "slug"}, ["ABC"]) == "skip:no_reverse_match"
    assert fill_or_skip("regex", {"slug": "slug"}, [None]) == "skip:missing_value"
    custom = compile_url("custom", {"word": "word"})
    assert custom.fill(["abc"]) == "/lower/abc/"
    assert fill_or_skip("custom", {"word": "word"}, ["A-b"]) == "skip:no_reverse_match"
