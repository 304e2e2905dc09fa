# "layout" meant four things; the page table's configuration digest is its fingerprint.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("django_sitemapx", "0004_pagestate_changes"),
    ]

    operations = [
        migrations.RenameField(
            model_name="pagestate",
            old_name="layout",
            new_name="fingerprint",
        ),
    ]
