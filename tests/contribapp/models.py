"""Models for the contrib drop-in tests: the shapes Django's own sitemap tests use."""

from django.db import models
from django.urls import reverse


class Thing(models.Model):
    """Located at /things/<pk>/, with an optional lastmod."""

    name = models.CharField(max_length=100)
    lastmod = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return f"/things/{self.pk}/"


class TranslatedThing(models.Model):
    """Located through a URL pattern under i18n_patterns, so the active language prefixes it."""

    name = models.CharField(max_length=100)

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("translated-thing", kwargs={"pk": self.pk})
