"""WSGI entry point for serving the benchmark site with gunicorn."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
application = get_wsgi_application()
