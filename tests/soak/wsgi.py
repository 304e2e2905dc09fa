"""The soak test's server: gunicorn's workers load this application."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.soak.settings")
application = get_wsgi_application()
