"""What ``--db`` names, told apart without importing the PostgreSQL driver (0.2 s)."""

from __future__ import annotations

__all__ = ["is_postgres_url"]


def is_postgres_url(text: str) -> bool:
    """Does ``--db`` name a PostgreSQL server (``postgresql://`` or ``postgres://``)?"""
    return text.startswith(("postgresql://", "postgres://"))
