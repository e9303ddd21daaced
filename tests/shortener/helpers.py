"""Helpers the shortener tests import (``from shortener.helpers import …``)."""

from __future__ import annotations

from dustless.shortener import ShortenerConfig


def open_config(**settings: object) -> ShortenerConfig:
    """A configuration in which anyone may create links and read statistics (--public
    --public-stats): for the tests of what a link does, not of who may make one."""
    return ShortenerConfig(**{"public": True, "public_stats": True, **settings})  # type: ignore[arg-type]
