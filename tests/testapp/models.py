"""Models that exercise what the example project does not."""

import uuid

from django.db import models


class Document(models.Model):
    """Located by a path column, with a date (not datetime) lastmod."""

    path = models.CharField(max_length=3000)
    published_on = models.DateField(null=True)
    weight = models.FloatField(default=0.5)

    def __str__(self) -> str:
        return self.path

    def get_absolute_url(self) -> str:
        return self.path


class UUIDThing(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4)

    def __str__(self) -> str:
        return str(self.id)


class AbstractThing(models.Model):
    class Meta:
        abstract = True


class Tag(models.Model):
    """Keyed by a string: pages are ranges of slugs."""

    slug = models.SlugField(primary_key=True, max_length=100)

    def __str__(self) -> str:
        return self.slug


class Placement(models.Model):
    """A composite primary key (Django 5.2): no single key to page on."""

    pk = models.CompositePrimaryKey("shelf", "position")
    shelf = models.IntegerField()
    position = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.shelf}/{self.position}"
