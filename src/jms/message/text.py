"""``TextMessage``: a message whose body is one String (plain text, XML, JSON)."""

from __future__ import annotations

from typing import Any

from jms.message.message import Message

__all__ = ["TextMessage"]


class TextMessage(Message):
    """A String body; ``None`` means no body (distinct from the empty string)."""

    __slots__ = ("_text",)
    body_type = "text"

    def __init__(self, text: str | None = None) -> None:
        super().__init__()
        self._text: str | None = None
        if text is not None:
            self.set_text(text)

    def set_text(self, text: str | None) -> None:
        self._check_body_writable()
        if text is not None and not isinstance(text, str):
            raise TypeError(f"TextMessage.set_text takes a str or None, got {type(text).__name__}")
        self._text = None if text is None else str(text)

    def get_text(self) -> str | None:
        return self._text

    def _clear_body_content(self) -> None:
        self._text = None

    def _has_body(self) -> bool:
        return self._text is not None

    def _body_value(self) -> Any:
        return self._text

    def _body_is_instance_of(self, cls: type) -> bool:
        return issubclass(str, cls)

    def _copy_body_into(self, clone: Any) -> None:
        clone._text = self._text
