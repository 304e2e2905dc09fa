"""The ``wagtail`` leg's test project: Wagtail's apps, two page types, ``tests/wagtailsite``.

``SITEMAPX_TEST_LEGS=wagtail scripts/test`` runs these tests with
``DJANGO_SETTINGS_MODULE=tests.wagtailsite.settings``; elsewhere they skip.
"""
