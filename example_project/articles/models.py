"""The example site's content: articles in categories, and their authors."""

import uuid

from django.db import models
from django.urls import reverse


class Category(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(unique=True)

    class Meta:
        verbose_name_plural = "categories"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("category-detail", kwargs={"category": self.slug})


class Article(models.Model):
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="articles")
    slug = models.SlugField(max_length=255, unique=True, allow_unicode=True)
    title = models.CharField(max_length=255)
    updated_at = models.DateTimeField(db_index=True)
    is_published = models.BooleanField(default=False, db_index=True)
    # When the article first appeared: the news section lists the last two days'.
    published_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse(
            "article-detail", kwargs={"category": self.category.slug, "slug": self.slug}
        )


class Author(models.Model):
    """Keyed by a UUID, as many projects key their models: its sitemap pages are UUID ranges."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("author-detail", kwargs={"author": self.id})


class ArticleImage(models.Model):
    """An image shown on an article: listed in the sitemap's ``<image:image>`` elements."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="images")
    # A path on the site or an absolute URL (a CDN, say).
    url = models.CharField(max_length=2000)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["article", "position", "pk"]

    def __str__(self) -> str:
        return self.url


class ArticleVideo(models.Model):
    """The video of an article: listed in the video section's ``<video:video>``."""

    article = models.OneToOneField(Article, on_delete=models.CASCADE, related_name="video")
    title = models.CharField(max_length=100)
    description = models.TextField(max_length=2048)
    thumbnail_url = models.CharField(max_length=2000)
    content_url = models.CharField(max_length=2000)
    duration = models.PositiveIntegerField(null=True, blank=True, help_text="Seconds.")
    family_friendly = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.title
