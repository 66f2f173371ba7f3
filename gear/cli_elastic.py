"""`gear migrate`: copy an embedded index into Elasticsearch (see gear/store/elastic.py)."""

from __future__ import annotations

from gear.cli import app  # noqa: F401 - commands are registered on this app
