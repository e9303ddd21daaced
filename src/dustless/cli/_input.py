"""Reading the files a user names: the one place where their bytes become text.

Every text file the ``dustless`` command reads (a ``--seeds`` list, a truth TSV, URLs on
standard input) goes through here, so that a wrong file — a binary, a Latin-1 export, a
directory, a name that does not exist — is one line naming the file and the line, never a
``UnicodeDecodeError`` traceback::

    dustless crawl: error: seeds.txt:3: not UTF-8 text (byte 0xe9 at column 17)

:class:`InputError` is a ``UsageError``: the CLI prints it as ``error: FILE:LINE: …`` and
exits 2. Callers that find something wrong in a line they parsed raise it too, with the
line number :func:`numbered_lines` gave them, so that every message about a file has the
same shape::

    for number, line in numbered_lines(path):
        if not looks_right(line):
            raise InputError(path, f"expected url<TAB>status<TAB>id, got {line[:60]!r}", number)

Text is UTF-8 (RFC 3629), with or without a byte-order mark; lines end in LF or CRLF and
come back without their ends. A NUL byte is refused as well: it is valid UTF-8, but no text
file a person writes holds one, and what follows it is usually binary garbage.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator

from dustless.errors import UsageError

__all__ = ["STDIN", "InputError", "content_lines", "decode_line", "numbered_lines", "text_lines"]

STDIN = "-"  # the file name that means standard input
_BOM = b"\xef\xbb\xbf"


class InputError(UsageError):
    """A file the user named cannot be read or holds what it must not: ``FILE:LINE: what``.

    ``line`` is 1-based; ``None`` when the problem is the file as a whole (it is missing,
    it is a directory).
    """

    def __init__(
        self, source: str | os.PathLike[str], message: str, line: int | None = None
    ) -> None:
        self.source = _display(source)
        self.line = line
        self.reason = message
        where = self.source if line is None else f"{self.source}:{line}"
        super().__init__(f"{where}: {message}")


def _display(source: str | os.PathLike[str]) -> str:
    name = os.fspath(source)
    return "<stdin>" if name == STDIN else name


def decode_line(data: bytes, source: str | os.PathLike[str], line: int) -> str:
    """One line's bytes as text, or :class:`InputError` saying where the bytes go wrong.

    For callers that read bytes themselves (a stream they also write bytes to); ``data`` may
    still end in its line break. A leading byte-order mark is left to the caller (it is only
    meaningful on line 1; :func:`numbered_lines` drops it).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Columns count characters, so a mistake after "é" is not off by one.
        column = len(data[: exc.start].decode("utf-8", "replace")) + 1
        raise InputError(
            source,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column})",
            line,
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError(source, f"a NUL byte at column {nul + 1}: not a text file", line)
    return text


def _strip_end(text: str) -> str:
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    return text


def _byte_lines(source: str | os.PathLike[str]) -> Iterator[bytes]:
    if os.fspath(source) == STDIN:
        yield from sys.stdin.buffer
        return
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed below, also when abandoned
    except IsADirectoryError:
        raise InputError(source, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(source, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        try:
            yield from handle
        except IsADirectoryError:  # open() of a directory succeeds on some systems
            raise InputError(source, "is a directory, not a file") from None
        except OSError as exc:
            raise InputError(source, f"cannot read: {exc.strerror or exc}") from None


def numbered_lines(source: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of a UTF-8 text file (``"-"``: standard input).

    Lazy: a file is read as the lines are taken, so a million-line file costs one line of
    memory, and an error is raised when its line is reached.
    """
    for number, data in enumerate(_byte_lines(source), start=1):
        if number == 1 and data.startswith(_BOM):
            data = data[len(_BOM) :]
        yield number, _strip_end(decode_line(data, source, number))


def text_lines(source: str | os.PathLike[str]) -> Iterator[str]:
    """The lines of a UTF-8 text file without their numbers (see :func:`numbered_lines`):
    what a parser that counts lines itself, like ``parse_truth``, wants."""
    for _number, text in numbered_lines(source):
        yield text


def content_lines(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The numbered lines that hold something: blank lines and ``#`` comments dropped, the
    rest stripped of surrounding blanks."""
    for number, text in lines:
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            yield number, stripped
