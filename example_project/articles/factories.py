"""factory-boy factories for the example models (used by ``seed_demo`` and the tests)."""

import datetime

import factory
from django.utils import timezone

from example_project.articles.models import Article, Category

# A fixed origin so that seeded data, and so the sitemap, is the same on every run.
EPOCH = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)


class CategoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Category
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Category {n}")
    slug = factory.Sequence(lambda n: f"category-{n}")


class ArticleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Article

    category = factory.SubFactory(CategoryFactory)
    slug = factory.Sequence(lambda n: f"article-{n}")
    title = factory.Sequence(lambda n: f"Article number {n}")
    updated_at = factory.LazyFunction(timezone.now)
    is_published = True


class DemoArticleFactory(ArticleFactory):
    """Deterministic demo rows: number ``n`` is unpublished when ``n`` is a multiple of 10."""

    class Params:
        number = 1

    slug = factory.LazyAttribute(lambda o: f"demo-article-{o.number}")
    title = factory.LazyAttribute(lambda o: f"Demo article {o.number}")
    updated_at = factory.LazyAttribute(lambda o: EPOCH + datetime.timedelta(minutes=o.number))
    is_published = factory.LazyAttribute(lambda o: o.number % 10 != 0)


def bulk_published_articles(
    category: Category, count: int, *, slug_prefix: str = "a", when: datetime.datetime = EPOCH
) -> None:
    """Insert published articles with ids 1..count in bulk (tests and benchmarks).

    Explicit ids make the keyset pages predictable whatever the database's
    sequence has already handed out.
    """
    Article.objects.bulk_create(
        (
            Article(
                id=n,
                category=category,
                slug=f"{slug_prefix}{n}",
                title=f"Article {n}",
                updated_at=when,
                is_published=True,
            )
            for n in range(1, count + 1)
        ),
        batch_size=5_000,
    )
