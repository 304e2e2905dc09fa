"""The soak test: writers, crawlers and a pre-forked server on one database and one cache."""
