"""The JMSException hierarchy.

Every error `jms` raises on purpose is one of these (or a Python built-in where API.md maps a Java
runtime exception onto one: ``ValueError`` for NumberFormatException and IllegalArgumentException,
``TypeError`` for NullPointerException). Messages say what was wrong, where, and with which value.
Python has no checked exceptions, so the JMS 2.0 ``*RuntimeException`` names are aliases of the
classic classes: ``except IllegalStateRuntimeException`` catches exactly what
``except IllegalStateException`` catches.
"""

from __future__ import annotations

__all__ = [
    "IllegalStateException",
    "IllegalStateRuntimeException",
    "InvalidClientIDException",
    "InvalidClientIDRuntimeException",
    "InvalidDestinationException",
    "InvalidDestinationRuntimeException",
    "InvalidSelectorException",
    "InvalidSelectorRuntimeException",
    "JMSException",
    "JMSRuntimeException",
    "JMSSecurityException",
    "JMSSecurityRuntimeException",
    "MessageEOFException",
    "MessageFormatException",
    "MessageFormatRuntimeException",
    "MessageNotReadableException",
    "MessageNotWriteableException",
    "MessageNotWriteableRuntimeException",
    "ResourceAllocationException",
    "ResourceAllocationRuntimeException",
    "TransactionInProgressException",
    "TransactionInProgressRuntimeException",
    "TransactionRolledBackException",
    "TransactionRolledBackRuntimeException",
]


class JMSException(Exception):
    """The root of every JMS error.

    ``error_code`` is the provider-specific code of Java's ``getErrorCode()``; ``linked_exception``
    (``getLinkedException()``) is the lower-level cause, also set as ``__cause__`` when given.
    """

    def __init__(
        self,
        reason: str,
        error_code: str | None = None,
        linked_exception: BaseException | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error_code = error_code
        self.linked_exception = linked_exception
        if linked_exception is not None:
            self.__cause__ = linked_exception

    def get_error_code(self) -> str | None:
        return self.error_code

    def get_linked_exception(self) -> BaseException | None:
        return self.linked_exception

    def set_linked_exception(self, cause: BaseException | None) -> None:
        self.linked_exception = cause
        self.__cause__ = cause


class MessageFormatException(JMSException):
    """A value has the wrong type for the call, or data cannot be decoded as a message."""


class MessageNotReadableException(JMSException):
    """A body read was attempted while the message body is write-only."""


class MessageNotWriteableException(JMSException):
    """A write was attempted while the body or the properties are read-only."""


class MessageEOFException(JMSException):
    """A Bytes or Stream body ended before the value being read."""


class InvalidSelectorException(JMSException):
    """A message selector is syntactically or (where knowable) semantically invalid."""


class InvalidDestinationException(JMSException):
    """A destination is unknown, malformed, deleted, or not valid for the operation."""


class IllegalStateException(JMSException):
    """A method was called at a time or in a state that does not allow it (e.g. on a closed object)."""


class JMSSecurityException(JMSException):
    """Authentication failed, or the user is not authorised for the operation."""


class TransactionRolledBackException(JMSException):
    """A commit failed and the transaction was rolled back instead."""


class TransactionInProgressException(JMSException):
    """The operation is not allowed while a transaction is in progress."""


class InvalidClientIDException(JMSException):
    """The client ID is malformed or already in use on this broker."""


class ResourceAllocationException(JMSException):
    """The provider cannot allocate a resource the call needs (memory, a connection, a thread)."""


# JMS 2.0 simplified-API names. Aliases, not subclasses: one class per error, one way to catch it.
JMSRuntimeException = JMSException
MessageFormatRuntimeException = MessageFormatException
MessageNotWriteableRuntimeException = MessageNotWriteableException
InvalidSelectorRuntimeException = InvalidSelectorException
InvalidDestinationRuntimeException = InvalidDestinationException
IllegalStateRuntimeException = IllegalStateException
JMSSecurityRuntimeException = JMSSecurityException
TransactionRolledBackRuntimeException = TransactionRolledBackException
TransactionInProgressRuntimeException = TransactionInProgressException
InvalidClientIDRuntimeException = InvalidClientIDException
ResourceAllocationRuntimeException = ResourceAllocationException
