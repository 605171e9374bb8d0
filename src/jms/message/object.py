"""``ObjectMessage``: a body holding one serialised Python object — deserialised safely.

The object is pickled when it is set, so later changes to the object do not change the message
(as Java serialises at ``setObject``). Reading never unpickles blindly: a pickle can name any
importable callable, and unpickling untrusted bytes would run it. Deserialisation resolves classes
only from an allow-list (builtin scalars and containers, a few standard value types, plus what the
application adds); anything else raises ``MessageFormatException`` before any foreign code runs.
This is a security property of the provider — see docs/semantics.md.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Iterable
from typing import Any, Final

from jms.errors import MessageFormatException
from jms.message.message import Message

__all__ = ["DEFAULT_ALLOWED_CLASSES", "ObjectMessage", "class_key"]

# "module.qualname" of every class that deserialisation may resolve by default. Types pickle
# encodes with dedicated opcodes (None, bool, int, float, str, bytes, list, tuple, dict, set,
# frozenset) need no entry; the rest are resolved by name and so must be listed.
DEFAULT_ALLOWED_CLASSES: Final = frozenset(
    {
        "builtins.NoneType",
        "builtins.bool",
        "builtins.int",
        "builtins.float",
        "builtins.complex",
        "builtins.str",
        "builtins.bytes",
        "builtins.bytearray",
        "builtins.list",
        "builtins.tuple",
        "builtins.dict",
        "builtins.set",
        "builtins.frozenset",
        "datetime.date",
        "datetime.time",
        "datetime.datetime",
        "datetime.timedelta",
        "datetime.timezone",
        "decimal.Decimal",
        "uuid.UUID",
        "uuid.SafeUUID",
    }
)


def class_key(cls: type | str) -> str:
    """``"module.qualname"`` for a class (strings pass through), the form allow-lists use."""
    if isinstance(cls, str):
        return cls
    if isinstance(cls, type):
        return f"{cls.__module__}.{cls.__qualname__}"
    raise TypeError(f"an allowed class is a class or a 'module.QualName' string, got {cls!r}")


def _refuse_sizes(constructor: type) -> Any:
    """``constructor`` unless called with an int, which would allocate that many zero bytes: a
    few bytes of hostile pickle must not be able to ask for gigabytes."""

    def build(*args: Any) -> Any:
        if args and isinstance(args[0], int):
            raise MessageFormatException(
                f"ObjectMessage data asks for {constructor.__name__}({args[0]}) by size; refused"
            )
        return constructor(*args)

    return build


_SIZED_CONSTRUCTORS: Final = {
    "builtins.bytes": _refuse_sizes(bytes),
    "builtins.bytearray": _refuse_sizes(bytearray),
}


class _AllowListUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: frozenset[str]) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        key = f"{module}.{name}"
        if key not in self._allowed:
            raise MessageFormatException(
                f"ObjectMessage refuses to deserialise class {key!r}: it is not on the allow-list; "
                "add it with set_allowed_classes() or the connection factory's allowed_classes"
            )
        if key in _SIZED_CONSTRUCTORS:
            return _SIZED_CONSTRUCTORS[key]
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise MessageFormatException("ObjectMessage data uses persistent ids, which are refused")


class ObjectMessage(Message):
    """A body of one picklable object, stored serialised (JMS ``ObjectMessage``)."""

    __slots__ = ("_allowed", "_serialized")
    body_type = "object"

    def __init__(self, obj: object = None, *, allowed_classes: Iterable[type | str] = ()) -> None:
        super().__init__()
        self._serialized: bytes | None = None
        self._allowed = DEFAULT_ALLOWED_CLASSES | {class_key(c) for c in allowed_classes}
        if obj is not None:
            self.set_object(obj)

    # -- allow-list ---------------------------------------------------------------------------

    def get_allowed_classes(self) -> frozenset[str]:
        return self._allowed

    def set_allowed_classes(self, classes: Iterable[type | str], *, replace: bool = False) -> None:
        """Allow more classes (``replace=True``: exactly these, without the defaults)."""
        extra = frozenset(class_key(c) for c in classes)
        self._allowed = extra if replace else self._allowed | extra

    # -- body ---------------------------------------------------------------------------------

    def set_object(self, obj: object) -> None:
        self._check_body_writable()
        if obj is None:
            self._serialized = None
            return
        try:
            self._serialized = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            raise MessageFormatException(
                f"ObjectMessage cannot serialise {type(obj).__name__}: {error}",
                linked_exception=error,
            ) from error

    def get_object(self) -> Any:
        """A fresh copy of the object, deserialised under the allow-list (None if no body)."""
        if self._serialized is None:
            return None
        try:
            return _AllowListUnpickler(self._serialized, self._allowed).load()
        except MessageFormatException:
            raise
        except Exception as error:
            raise MessageFormatException(
                f"ObjectMessage body cannot be deserialised: {type(error).__name__}: {error}",
                linked_exception=error,
            ) from error

    def get_serialized_object(self) -> bytes | None:
        """The serialised body as stored (what travels on the wire)."""
        return self._serialized

    def _set_serialized_object(self, data: bytes | None) -> None:
        self._serialized = data

    def _clear_body_content(self) -> None:
        self._serialized = None

    def _has_body(self) -> bool:
        return self._serialized is not None

    def _body_value(self) -> Any:
        return self.get_object()

    def _body_is_instance_of(self, cls: type) -> bool:
        try:
            return isinstance(self.get_object(), cls)
        except MessageFormatException:
            return False

    def get_body(self, cls: type) -> Any:
        if not isinstance(cls, type):
            raise TypeError(f"get_body takes a class, got {cls!r}")
        obj = self.get_object()  # a refused or broken body raises MessageFormatException itself
        if obj is not None and not isinstance(obj, cls):
            raise MessageFormatException(
                f"the body of this ObjectMessage is a {type(obj).__name__}, not a {cls.__name__}"
            )
        return obj

    def _copy_body_into(self, clone: Any) -> None:
        clone._serialized = self._serialized
        clone._allowed = self._allowed
