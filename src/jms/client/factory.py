"""``ConnectionFactory(url, **options)``: where connections come from.

The URL picks the transport: ``memory://`` (the process's default in-process broker),
``memory://NAME`` (a named one, shared by every factory naming it), ``embedded:///path`` (the
process's in-process broker over the durable store in that directory), ``stomp://HOST:PORT``
(a broker over the network: a ``jms broker``, or another STOMP broker such as ActiveMQ) or
``stomp+ssl://HOST:PORT`` (the same over TLS: the server's certificate and host name are verified
against the system trust store, or as the ``ssl_context`` option says), or
``failover:(stomp://H1:P1,stomp://H2:P2)?OPTIONS`` (whichever of those brokers is active, and
another when it fails: ``jms.client.failover``, docs/ha.md). The options are
``ClientOptions``'. The factory holds configuration only; each ``create_connection`` opens a new
connection.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

from jms.broker import embedded_broker
from jms.broker.registry import EMBEDDED_SCHEMES
from jms.client.connection import Connection
from jms.client.context import JMSContext
from jms.client.failover import (
    FAILOVER_SCHEME,
    FailoverTransport,
    parse_failover_url,
    uses_tls,
)
from jms.client.options import ClientOptions
from jms.client.stomp_transport import StompTransport, parse_stomp_url
from jms.client.transport import Transport
from jms.errors import JMSException

__all__ = ["ConnectionFactory"]

#: ``(user, password, client_id, on_lost, on_interrupted)`` -> an open transport; a failover
#: transport calls ``on_interrupted`` each time it loses a connection and opens another.
_Opener = Callable[
    [str | None, str | None, str | None, Callable[[JMSException], None], Callable[[], None]],
    Transport,
]


def _opener_for(url: str, ssl_context: ssl.SSLContext | None, virtual_host: str) -> _Opener:
    if not isinstance(url, str):
        raise JMSException(f"a broker URL is a string, got {type(url).__name__} {url!r}")
    if url.startswith(FAILOVER_SCHEME):
        return _failover_opener(url, ssl_context, virtual_host)
    scheme = url.partition("://")[0]
    if ssl_context is not None and scheme != "stomp+ssl":
        raise JMSException(
            f"the ssl_context option is for stomp+ssl://HOST:PORT URLs; {url!r} does not use TLS"
        )
    if scheme in EMBEDDED_SCHEMES:
        from jms.client.inprocess import InProcessTransport  # with the broker engine it drives

        embedded_broker(url)  # refuses a malformed URL (or a locked store) now, not at connect
        return lambda user, password, client_id, on_lost, _: InProcessTransport(
            embedded_broker(url), user, password, client_id, on_lost
        )
    if scheme in ("stomp", "stomp+ssl"):
        # Refuses a malformed URL now rather than at the first connection.
        _, _, tls = parse_stomp_url(url)
        if tls and ssl_context is None:
            ssl_context = ssl.create_default_context()
        return lambda user, password, client_id, on_lost, _: StompTransport(
            url, user, password, client_id, on_lost, ssl_context, virtual_host
        )
    raise JMSException(
        f"unsupported broker URL {url!r}: this provider connects to memory://, memory://NAME, "
        "embedded:///path/to/store-directory, stomp://HOST:PORT, stomp+ssl://HOST:PORT and "
        "failover:(stomp://HOST:PORT,...)"
    )


def _failover_opener(url: str, ssl_context: ssl.SSLContext | None, virtual_host: str) -> _Opener:
    urls, options = parse_failover_url(url)
    if ssl_context is not None and not uses_tls(url):
        raise JMSException(
            f"the ssl_context option is for stomp+ssl://HOST:PORT URLs; {url!r} lists none"
        )
    if uses_tls(url) and ssl_context is None:
        ssl_context = ssl.create_default_context()

    def opener(
        user: str | None,
        password: str | None,
        client_id: str | None,
        on_lost: Callable[[JMSException], None],
        on_interrupted: Callable[[], None],
    ) -> Transport:
        def open_stomp(
            broker_url: str, client_id: str | None, on_close: Callable[[JMSException], None]
        ) -> StompTransport:
            context = ssl_context if broker_url.startswith("stomp+ssl://") else None
            return StompTransport(
                broker_url, user, password, client_id, on_close, context, virtual_host
            )

        return FailoverTransport(urls, options, open_stomp, client_id, on_lost, on_interrupted)

    return opener


class ConnectionFactory:
    """Creates connections (and JMS 2.0 contexts) to the broker at ``url``."""

    def __init__(self, url: str = "memory://", **options: Any) -> None:
        self._url = url
        self._options = ClientOptions.from_keywords(options)
        self._opener = _opener_for(url, self._options.ssl_context, self._options.virtual_host)

    def __repr__(self) -> str:
        return f"ConnectionFactory({self._url!r})"

    @property
    def url(self) -> str:
        return self._url

    def create_connection(self, user: str | None = None, password: str | None = None) -> Connection:
        """A new, stopped connection; without ``user`` the factory's ``user``/``password`` apply."""
        if user is None:
            user, password = self._options.user, self._options.password
        options = self._options
        return Connection(
            lambda on_lost, on_interrupted: self._opener(
                user, password, options.client_id, on_lost, on_interrupted
            ),
            options,
        )

    def create_context(
        self,
        user: str | int | None = None,
        password: str | None = None,
        session_mode: int = JMSContext.AUTO_ACKNOWLEDGE,
    ) -> JMSContext:
        """A JMS 2.0 context: a new connection and one session in ``session_mode``. Like Java's
        ``createContext(int sessionMode)``, ``create_context(JMSContext.CLIENT_ACKNOWLEDGE)``
        with one int is the session mode."""
        if type(user) is int:
            if password is not None or session_mode != JMSContext.AUTO_ACKNOWLEDGE:
                raise TypeError(
                    f"create_context({user}, ...): one int is the session mode; give the user "
                    "as a str, or the mode alone or as session_mode="
                )
            user, session_mode = None, user
        if user is not None and not isinstance(user, str):
            raise TypeError(f"create_context takes a user name as a str; got {user!r}")
        connection = self.create_connection(user, password)
        try:
            return JMSContext._open(connection, session_mode)
        except BaseException:
            connection.close()
            raise
