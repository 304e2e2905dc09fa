"""A project of its own for the export's worker tests: processes sharing a SQLite file.

``settings`` points every process (the test's helpers and the ``db_worker``
processes) at the file named by ``SITEMAPX_WORKERS_DB``; ``sitemapx`` registers
one slow section; ``cli`` seeds, starts and checks exports.
"""
