"""``MapMessage``: a body of named, typed values read back through the Stream conversion table.

Values keep their Java type (``jms.types``), names are any non-empty strings, and reads convert as
the spec's table allows (an int reads as a long or String, a String as any primitive that its text
parses as). A missing name reads like null: false as boolean, None as String/bytes/object,
``ValueError`` as a number, ``TypeError`` as a char.
"""

from __future__ import annotations

from typing import Any

from jms.message.byte_arrays import slice_of
from jms.message.conversions import convert, typed_value
from jms.message.message import Message
from jms.types import Byte, Char, Double, Float, Int, Long, Short

__all__ = ["MapMessage"]


def _check_name(name: object) -> str:
    if not isinstance(name, str) or name == "":
        raise ValueError(
            f"a MapMessage name must be a non-empty str (IllegalArgumentException); got {name!r}"
        )
    return name


class MapMessage(Message):
    """Name → typed value pairs; order of names is insertion order but not significant."""

    __slots__ = ("_map",)
    body_type = "map"

    def __init__(self) -> None:
        super().__init__()
        self._map: dict[str, Any] = {}

    def _set(self, name: str, value: object) -> None:
        _check_name(name)
        self._check_body_writable()
        self._map[name] = value

    def _get(self, name: str, target: str) -> Any:
        return convert(self._map.get(_check_name(name)), target, f"map entry {name!r}")

    # -- setters ------------------------------------------------------------------------------

    def set_boolean(self, name: str, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"map entry {name!r}: set_boolean takes a bool, got {value!r}")
        self._set(name, value)

    def set_byte(self, name: str, value: int) -> None:
        self._set(name, Byte(value))

    def set_short(self, name: str, value: int) -> None:
        self._set(name, Short(value))

    def set_char(self, name: str, value: str) -> None:
        self._set(name, Char(value))

    def set_int(self, name: str, value: int) -> None:
        self._set(name, Int(value))

    def set_long(self, name: str, value: int) -> None:
        self._set(name, Long(value))

    def set_float(self, name: str, value: float) -> None:
        self._set(name, Float(value))

    def set_double(self, name: str, value: float) -> None:
        self._set(name, Double(value))

    def set_string(self, name: str, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"map entry {name!r}: set_string takes a str or None, got {value!r}")
        self._set(name, None if value is None else str(value))

    def set_bytes(
        self, name: str, value: bytes | bytearray | None, offset: int = 0, length: int | None = None
    ) -> None:
        """Store a copy of ``value[offset:offset+length]`` (None stores null)."""
        if value is None:
            self._set(name, None)
            return
        self._set(name, slice_of(value, offset, length, f"map entry {name!r}: set_bytes"))

    def set_object(self, name: str, value: object) -> None:
        self._set(name, typed_value(value, f"map entry {name!r}", allow_body_types=True))

    # -- getters ------------------------------------------------------------------------------

    def get_boolean(self, name: str) -> bool:
        return self._get(name, "boolean")

    def get_byte(self, name: str) -> int:
        return int(self._get(name, "byte"))

    def get_short(self, name: str) -> int:
        return int(self._get(name, "short"))

    def get_char(self, name: str) -> str:
        return self._get(name, "char")

    def get_int(self, name: str) -> int:
        return int(self._get(name, "int"))

    def get_long(self, name: str) -> int:
        return int(self._get(name, "long"))

    def get_float(self, name: str) -> float:
        return float(self._get(name, "float"))

    def get_double(self, name: str) -> float:
        return float(self._get(name, "double"))

    def get_string(self, name: str) -> str | None:
        return self._get(name, "String")

    def get_bytes(self, name: str) -> bytes | None:
        return self._get(name, "byte[]")

    def get_object(self, name: str) -> Any:
        """The value as set, typed (``Int(5)``, ``Char('x')``, ``bytes``), or None."""
        return self._map.get(_check_name(name))

    def get_map_names(self) -> list[str]:
        return list(self._map)

    def item_exists(self, name: str) -> bool:
        return name in self._map

    # -- body as a whole ----------------------------------------------------------------------

    def _clear_body_content(self) -> None:
        self._map = {}

    def _has_body(self) -> bool:
        return bool(self._map)

    def _body_value(self) -> Any:
        return dict(self._map)

    def _body_is_instance_of(self, cls: type) -> bool:
        return issubclass(dict, cls)

    def _copy_body_into(self, clone: Any) -> None:
        clone._map = dict(self._map)
