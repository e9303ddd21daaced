"""The ``dustless`` command line; see :mod:`dustless.cli.main`."""

from dustless.cli.main import main

__all__ = ["main"]
