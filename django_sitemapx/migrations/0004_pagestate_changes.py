"""Page change counts in the page table: which page changed, when no cache is configured."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0003_pendingurl"),
    ]

    operations = [
        migrations.AddField(
            model_name="pagestate",
            name="changes",
            field=models.PositiveBigIntegerField(default=0),
        ),
        # Existing pages start never counted: each is counted once more.
        migrations.AddField(
            model_name="pagestate",
            name="counted",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
    ]
