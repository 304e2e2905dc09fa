"""The gzip bytes of a whole document, as the views and the export write them."""

from django_sitemapx.compression import gzip_compressor


def gzip_bytes(data: bytes) -> bytes:
    """``data`` through one ``gzip_compressor()``."""
    compressor = gzip_compressor()
    return compressor.compress(data) + compressor.flush()
