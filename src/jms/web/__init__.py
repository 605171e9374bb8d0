"""The broker's HTTP front end, beside the STOMP server (it knows sockets; ``jms.broker`` does
not): one aiohttp port with STOMP over WebSocket at ``/stomp``, Prometheus metrics at
``/metrics`` and the web console at ``/`` (docs/http.md, docs/console.md). It reaches the broker
only through a started ``jms.stomp.StompServer``: WebSocket clients get the server's own
connections, the console the server's broker and security.
"""

from jms.web.server import HttpServer
from jms.web.websocket import STOMP_SUBPROTOCOLS

__all__ = ["STOMP_SUBPROTOCOLS", "HttpServer"]
