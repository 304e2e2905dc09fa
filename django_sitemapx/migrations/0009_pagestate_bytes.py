# Each page's size in bytes as last built (or estimated when a page that went
# over the protocol's 50 MB was split): pages are sized by the URL limit and
# split when they would go over the byte limit (see docs/guide/pages.md).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0008_removedurl"),
    ]

    operations = [
        migrations.AddField(
            model_name="pagestate",
            name="bytes",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
    ]
