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
