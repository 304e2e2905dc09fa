# An override may name the host it applies on (issue 24: Wagtail sites sharing a path).
# A host-less override's location_hash is its location's digest as before: no data migration.

from django.db import migrations, models

import django_sitemapx.models


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0011_pagestate_measured"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="override",
            options={
                "ordering": ("location", "host"),
                "verbose_name": "sitemap override",
                "verbose_name_plural": "sitemap overrides",
            },
        ),
        migrations.AddField(
            model_name="override",
            name="host",
            field=models.CharField(
                blank=True,
                default="",
                help_text=(
                    "Only on this host, where it wins over an override of the same location "
                    "without host. Empty: every host."
                ),
                max_length=255,
                verbose_name="host",
            ),
        ),
        # Whether any override names a document's hosts is asked once per document.
        migrations.AddIndex(
            model_name="override",
            index=models.Index(fields=["host"], name="sitemapx_override_host"),
        ),
        migrations.AlterField(
            model_name="override",
            name="location",
            field=models.CharField(
                help_text=(
                    "A path such as /about/ or the full URL. Stored without host and trailing "
                    "slash, so /about/ and https://example.com/about are the same location; "
                    "the host field says which host the override applies on."
                ),
                max_length=2048,
                validators=[django_sitemapx.models.validate_location],
                verbose_name="location",
            ),
        ),
    ]
