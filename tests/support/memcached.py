"""The Memcached the tests use: scripts/test starts one per lane (``SITEMAPX_TEST_MEMCACHED``)."""

import os

MEMCACHED = os.environ.get("SITEMAPX_TEST_MEMCACHED", "127.0.0.1:11211")
MEMCACHED_HOST, _, _port = MEMCACHED.rpartition(":")
MEMCACHED_PORT = int(_port)
