from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("testapp", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="Tag",
            fields=[("slug", models.SlugField(max_length=100, primary_key=True, serialize=False))],
        ),
        migrations.CreateModel(
            name="Placement",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "shelf", "position", blank=True, editable=False, primary_key=True,
                        serialize=False,
                    ),
                ),
                ("shelf", models.IntegerField()),
                ("position", models.IntegerField()),
            ],
        ),
    ]
