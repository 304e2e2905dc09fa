# The log of changed rows an incremental export reads to remake only the blocks
# of a page that hold them (see docs/guide/export.md, "Spliced pages").

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0012_override_host"),
    ]

    operations = [
        migrations.CreateModel(
            name="ChangedKey",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("section", models.CharField(max_length=100)),
                ("page", models.PositiveIntegerField(null=True)),
                ("key", models.CharField(max_length=255, null=True)),
                ("created", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "verbose_name": "changed sitemap row",
                "verbose_name_plural": "changed sitemap rows",
                "indexes": [
                    models.Index(fields=["created"], name="sitemapx_changedkey_created")
                ],
            },
        ),
    ]
