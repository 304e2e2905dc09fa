"""The Wagtail demo: two Wagtail sites in two languages, listed by ``WagtailPageSource``.

Run it with ``scripts/demo --wagtail`` (settings ``example_project.wagtail_settings``):
http://a.localhost:8000/sitemap.xml and http://b.localhost:8000/sitemap.xml, the
editor at http://a.localhost:8000/cms/ (``seed_wagtail_demo --admin``).
"""
