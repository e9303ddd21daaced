"""dustless: a polite, fast, crash-safe web crawler built around a measurable URL normalizer.

The packages and the flow of a URL are described in ``docs/architecture.md``; each
package keeps its public names in its ``__init__``.
"""

__all__ = ["DEFAULT_USER_AGENT", "__version__"]

__version__ = "0.1.0"
# What the crawler and the fetcher send unless told otherwise: product/version and a comment
# saying where to read about the robot (RFC 9110 §10.1.5). Here, in the package root, so that
# ``dustless.fetch`` and ``dustless.crawl.config`` (which must not import the fetcher) share it.
DEFAULT_USER_AGENT = "dustless/0.1 (+https://github.com/dustless/dustless)"
