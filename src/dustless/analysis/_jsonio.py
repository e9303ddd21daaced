"""Frozen dataclasses to JSON-ready dicts and back, driven by their type hints.

``dustless stats --json`` and ``evaluate --json`` print these dicts; ``dustless report`` can
read them back (``--stats FILE`` / ``--evaluation FILE``), so the report renders from typed
values whichever way they were produced. Only the shapes our result types use are supported:
dataclasses, ``tuple[X, ...]``, ``X | None``, ``str``, ``int``, ``float``, ``bool``.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, TypeVar

from dustless.errors import InvalidOption

__all__ = ["from_jsonable", "to_jsonable"]

T = TypeVar("T")


def to_jsonable(value: Any) -> Any:
    """A dataclass (or tuple of them) as plain dicts/lists; NaN and infinities become None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(to_jsonable(v) for v in value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def from_jsonable(cls: type[T], data: Any, where: str = "") -> T:
    """Rebuild ``cls`` from :func:`to_jsonable`'s output; InvalidOption names a bad field."""
    return typing.cast(T, _decode(cls, data, where or cls.__name__))


def _decode(tp: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        return _decode(rest[0], data, where)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise InvalidOption(f"{where}: expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
        return tuple(
            _decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True))
        )
    if origin is frozenset:
        (arg,) = typing.get_args(tp)
        return frozenset(_decode(arg, v, where) for v in data)
    if dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise InvalidOption(f"{where}: expected an object")
        hints = typing.get_type_hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise InvalidOption(f"{where}: missing field {f.name!r}")
        return typing.cast(Any, tp)(**kwargs)
    if tp is float:
        if data is None:
            return math.nan
        if isinstance(data, int | float) and not isinstance(data, bool):
            return float(data)
        raise InvalidOption(f"{where}: expected a number")
    if tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
        raise InvalidOption(f"{where}: expected an integer")
    if tp is bool:
        if isinstance(data, bool):
            return data
        raise InvalidOption(f"{where}: expected true or false")
    if tp is str:
        if isinstance(data, str):
            return data
        raise InvalidOption(f"{where}: expected a string")
    raise InvalidOption(f"{where}: cannot decode type {tp!r}")
