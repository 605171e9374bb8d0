"""Destinations: the values of ``JMSDestination`` and ``JMSReplyTo``.

A destination is a small immutable value (kind + name) with the JMS accessors
(``get_queue_name()``/``get_topic_name()``) and one canonical text form, ``queue://orders``, which
the codec, the Spark schema, logs and the CLI all use. Temporary destinations are values too: the
provider owns their lifetime (creation, deletion, which connection may consume them); ``delete()``
asks the provider through a hook it installs and fails clearly when none did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Final

from jms.errors import IllegalStateException, InvalidDestinationException

__all__ = ["Destination", "Queue", "TemporaryQueue", "TemporaryTopic", "Topic"]


class Destination:
    """A queue or topic, named; equal and hashable by kind and name."""

    __slots__ = ("_name",)
    scheme: ClassVar[str] = ""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidDestinationException(
                f"a {type(self).__name__} needs a non-empty name, got {name!r}"
            )
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._name == self._name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.scheme, self._name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    def __str__(self) -> str:
        return f"{self.scheme}://{self._name}"

    @property
    def is_queue(self) -> bool:
        return isinstance(self, Queue)

    @property
    def is_temporary(self) -> bool:
        return isinstance(self, TemporaryQueue | TemporaryTopic)

    @staticmethod
    def parse(text: str) -> Destination:
        """The destination named by ``queue://x``, ``topic://x``, ``temp-queue://x``, ``temp-topic://x``."""
        if isinstance(text, str):
            scheme, separator, name = text.partition("://")
            kind = _KINDS.get(scheme)
            if separator and kind is not None and name:
                return kind(name)
        raise InvalidDestinationException(
            f"{text!r} is not a destination; expected queue://NAME, topic://NAME, "
            "temp-queue://NAME or temp-topic://NAME"
        )


class Queue(Destination):
    """A point-to-point destination: each message goes to one consumer."""

    __slots__ = ()
    scheme = "queue"

    def get_queue_name(self) -> str:
        return self._name

    def to_string(self) -> str:
        return str(self)


class Topic(Destination):
    """A publish/subscribe destination: each subscription gets its own copy."""

    __slots__ = ()
    scheme = "topic"

    def get_topic_name(self) -> str:
        return self._name

    def to_string(self) -> str:
        return str(self)


class _Temporary:
    """Mixin for temporary destinations; the provider installs the deleter when it creates one."""

    __slots__ = ()

    def delete(self) -> None:
        deleter = getattr(self, "_deleter", None)
        if deleter is None:
            raise IllegalStateException(
                f"{self} was not created by a connection of this process, so it cannot be deleted here"
            )
        deleter()


class TemporaryQueue(_Temporary, Queue):
    """A queue that lives as long as the connection that created it."""

    __slots__ = ("_deleter",)
    scheme = "temp-queue"

    def __init__(self, name: str, deleter: Callable[[], None] | None = None) -> None:
        super().__init__(name)
        self._deleter = deleter


class TemporaryTopic(_Temporary, Topic):
    """A topic that lives as long as the connection that created it."""

    __slots__ = ("_deleter",)
    scheme = "temp-topic"

    def __init__(self, name: str, deleter: Callable[[], None] | None = None) -> None:
        super().__init__(name)
        self._deleter = deleter


_KINDS: Final[dict[str, type[Destination]]] = {
    "queue": Queue,
    "topic": Topic,
    "temp-queue": TemporaryQueue,
    "temp-topic": TemporaryTopic,
}
