"""``manage.py seed_wagtail_demo``: two Wagtail sites in English and French; safe to run again."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_sitemapx import invalidate
from example_project.wagtail_demo.seeding import HOSTS, PORT, seed


class Command(BaseCommand):
    help = "Create the Wagtail demo's two sites (English and French pages); safe to run again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hosts", nargs=2, default=list(HOSTS), help="The two sites' hosts.")
        parser.add_argument("--port", type=int, default=PORT, help="The port they are served on.")
        parser.add_argument("--count", type=int, default=5, help="Pages per site and language.")
        parser.add_argument(
            "--admin",
            action="store_true",
            help="Also make the superuser admin (password: admin) to sign in to /cms/.",
        )

    def handle(self, *args: Any, hosts: list[str], port: int, count: int, **options: Any) -> None:
        if count < 0 or not 0 < port < 65536:
            raise CommandError("--count must be zero or more and --port a port number.")
        seeded = seed(tuple(hosts), port, count)
        invalidate()
        if options["admin"]:
            User = get_user_model()
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "admin@example.com", "admin")
        if options["verbosity"] > 0:
            for host, pages in seeded.pages.items():
                self.stdout.write(
                    f"{host}:{port}: {len(pages)} pages, sitemap http://{host}:{port}/sitemap.xml"
                )
