"""dustless: a polite, fast, crash-safe web crawler built around a measurable URL normalizer.

The packages and the flow of a URL are described in ``docs/architecture.md``; each
package keeps its public names in its ``__init__``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
