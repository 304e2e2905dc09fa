"""Sources for other Django apps' content: ``contrib.wagtail`` for Wagtail page trees."""
