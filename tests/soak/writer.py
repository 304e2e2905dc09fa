"""A soak writer: saves the example's articles through the ORM, as editors do, until told to stop.

    python -m tests.soak.writer NUMBER SECONDS SEED OUT.json

Writer ``NUMBER`` changes only its own articles (titles starting ``W<NUMBER> ``),
so writers never conflict with each other on a row: an error here is the
application's (its receivers run inside the save), and the test fails on it.
Publishes, unpublishes, edits (lastmod, category), slug changes, deletes and
creates, alone or several in one transaction, and transactions rolled back.
Writes how many of each committed, and the errors, to ``OUT.json``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any


class RolledBack(Exception):
    """Raised inside a transaction to roll it back."""


def main(argv: list[str]) -> int:
    number, seconds, seed, out = int(argv[0]), float(argv[1]), int(argv[2]), Path(argv[3])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.soak.settings")
    import django

    django.setup()
    from django.db import transaction
    from django.utils import timezone

    from example_project.articles.models import Article, Category

    rng = random.Random(seed * 1000 + number)
    prefix = f"W{number} "
    owned = set(Article.objects.filter(title__startswith=prefix).values_list("pk", flat=True))
    categories = list(Category.objects.all())
    committed: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    examples: list[str] = []
    created = 0
    # Rows a running transaction deleted: not picked again before it ends.
    taken: set[int] = set()

    def pick() -> Any:
        choices = sorted(owned - taken)
        return Article.objects.get(pk=rng.choice(choices)) if choices else None

    def count(kind: str) -> None:
        transaction.on_commit(lambda: committed.update([kind]))

    def toggle() -> None:
        article = pick()
        if article is None:
            return
        now = timezone.now()
        article.is_published = not article.is_published
        if article.is_published and article.published_at is None:
            article.published_at = now
        article.updated_at = now
        article.save()
        count("publish" if article.is_published else "unpublish")

    def edit() -> None:
        article = pick()
        if article is None:
            return
        article.title = f"{prefix}edited {rng.randrange(10**9)}"
        if rng.random() < 0.3:
            article.category = rng.choice(categories)
        article.updated_at = timezone.now()
        article.save()
        count("edit")

    def rename() -> None:
        nonlocal created
        article = pick()
        if article is None:
            return
        created += 1
        article.slug = f"w{number}-renamed-{created}-{rng.randrange(10**9)}"
        article.updated_at = timezone.now()
        article.save()
        count("slug change")

    def delete() -> None:
        article = pick()
        if article is None:
            return
        pk = article.pk
        article.delete()
        taken.add(pk)
        transaction.on_commit(lambda: owned.discard(pk))
        count("delete")

    def create() -> None:
        nonlocal created
        created += 1
        now = timezone.now()
        published = rng.random() < 0.7
        article = Article.objects.create(
            category=rng.choice(categories),
            slug=f"w{number}-new-{created}-{rng.randrange(10**9)}",
            title=f"{prefix}new {created}",
            updated_at=now,
            is_published=published,
            published_at=now if published else None,
        )
        pk = article.pk
        taken.add(pk)  # not changed again before its creation commits
        transaction.on_commit(lambda: owned.add(pk))
        count("create")

    single: list[tuple[Callable[[], None], int]] = [
        (toggle, 4),
        (edit, 3),
        (rename, 2),
        (delete, 2),
        (create, 2),
    ]

    def one() -> Callable[[], None]:
        return rng.choices([f for f, _ in single], [w for _, w in single])[0]

    def several() -> None:
        with transaction.atomic():
            for _ in range(rng.randint(2, 5)):
                one()()
                # A transaction that does other work too: its rows' pages may split or
                # merge in other processes before it commits.
                time.sleep(rng.uniform(0, 0.15))
        committed["transaction"] += 1

    def rolled_back() -> None:
        try:
            with transaction.atomic():
                for _ in range(rng.randint(1, 3)):
                    one()()
                raise RolledBack
        except RolledBack:
            committed["rollback"] += 1

    kinds = [*single, (several, 2), (rolled_back, 1)]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        action = rng.choices([f for f, _ in kinds], [w for _, w in kinds])[0]
        taken.clear()
        try:
            action()
        except Exception as error:
            first = str(error).splitlines()[0][:200] if str(error) else ""
            key = f"{type(error).__name__}: {first}"
            errors[key] += 1
            if len(examples) < 3:
                examples.append(traceback.format_exc()[-3000:])
        time.sleep(rng.uniform(0, 0.03))
    out.write_text(json.dumps({"committed": committed, "errors": errors, "examples": examples}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
