# Whether a page's size was measured over its current range: a page that goes over
# the protocol's 50 MB, or is built well under it, re-cuts the pages after it that
# were not measured yet (see docs/guide/pages.md).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0010_exportpart"),
    ]

    operations = [
        migrations.AddField(
            model_name="pagestate",
            name="measured",
            field=models.BooleanField(default=False),
        ),
    ]
