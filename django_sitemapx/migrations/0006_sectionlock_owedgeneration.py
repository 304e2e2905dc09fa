# One writer of a section's pages at a time (SectionLock), and the cache
# generations a page change must replace, kept durably (OwedGeneration).
# Pages per host of a section whose rows differ only by a time-valued filter
# (news) are obsolete: the section's shared pages serve every host now.

import django.utils.timezone
from django.db import migrations, models


def drop_host_pages(apps, schema_editor):  # type: ignore[no-untyped-def]
    page_state = apps.get_model("django_sitemapx", "PageState")
    page_state.objects.using(schema_editor.connection.alias).filter(
        section__contains="@"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0005_pagestate_fingerprint"),
    ]

    operations = [
        migrations.CreateModel(
            name="SectionLock",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("section", models.CharField(max_length=100, unique=True)),
            ],
            options={
                "verbose_name": "sitemap section lock",
                "verbose_name_plural": "sitemap section locks",
            },
        ),
        migrations.CreateModel(
            name="OwedGeneration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=255)),
                ("batch", models.CharField(db_index=True, max_length=32)),
                ("created", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "verbose_name": "owed cache generation",
                "verbose_name_plural": "owed cache generations",
            },
        ),
        migrations.RunPython(drop_host_pages, migrations.RunPython.noop),
    ]
