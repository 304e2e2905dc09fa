"""The override's uniqueness moves to a digest of its location; model sections' page state.

MySQL 8 refuses, and MariaDB warns about (``mysql.W003``), a unique index on a
2,048-character column. Existing rows keep their locations: the digest is
filled in for each before it becomes unique.
"""

import hashlib

from django.db import migrations, models

import django_sitemapx.models


def fill_location_hash(apps, schema_editor):  # type: ignore[no-untyped-def]
    Override = apps.get_model("django_sitemapx", "Override")
    rows = Override.objects.using(schema_editor.connection.alias)
    for pk, location in rows.values_list("pk", "location").iterator():
        digest = hashlib.sha256(location.encode()).hexdigest()
        rows.filter(pk=pk).update(location_hash=digest)


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="override",
            name="location_hash",
            field=models.CharField(editable=False, max_length=64, null=True),
        ),
        migrations.RunPython(fill_location_hash, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name="override",
            name="location_hash",
            field=models.CharField(editable=False, max_length=64, unique=True),
        ),
        migrations.AlterField(
            model_name="override",
            name="location",
            field=models.CharField(
                help_text="A path such as /about/ or the full URL. Stored without host and trailing slash, so /about/ and https://example.com/about are the same override.",
                max_length=2048,
                validators=[django_sitemapx.models.validate_location],
                verbose_name="location",
            ),
        ),
        migrations.CreateModel(
            name="PageState",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("section", models.CharField(max_length=100)),
                ("number", models.PositiveIntegerField()),
                ("first", models.CharField(blank=True, max_length=255)),
                ("rows", models.PositiveIntegerField(default=0)),
                ("undated", models.PositiveIntegerField(default=0)),
                ("lastmod", models.CharField(blank=True, max_length=40, null=True)),
                ("generation", models.CharField(blank=True, max_length=40)),
                ("layout", models.CharField(max_length=40)),
            ],
            options={
                "verbose_name": "sitemap page",
                "verbose_name_plural": "sitemap pages",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("section", "number"), name="sitemapx_pagestate_number"
                    ),
                    models.UniqueConstraint(
                        fields=("section", "first"), name="sitemapx_pagestate_first"
                    ),
                ],
            },
        ),
    ]
