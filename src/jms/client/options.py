"""``ClientOptions``: the keyword options of ``ConnectionFactory(url, **options)``, validated once.

- ``client_id``: the client ID every connection from this factory claims (unique per broker);
- ``user``, ``password``: credentials used when ``create_connection`` is given none;
- ``prefetch``: deliveries a consumer may hold before its application takes them (default 100);
- ``max_deliveries``: the redelivery limit for messages these consumers fail, overriding the
  destination's policy (default: the policy's, 10 unless configured);
- ``allowed_classes``: classes received ObjectMessages may deserialise, added to the defaults;
- ``ssl_context``: an ``ssl.SSLContext`` for a ``stomp+ssl://`` URL — a private CA
  (``ssl.create_default_context(cafile=...)``), a client certificate (``load_cert_chain``);
  without it the system trust store verifies the server's certificate and host name.

Configuration only: nothing here connects or holds state.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jms.broker import DEFAULT_PREFETCH

__all__ = ["ClientOptions"]


@dataclass(frozen=True, slots=True)
class ClientOptions:
    client_id: str | None = None
    user: str | None = None
    password: str | None = None
    prefetch: int = DEFAULT_PREFETCH
    max_deliveries: int | None = None
    allowed_classes: tuple[type | str, ...] = ()
    ssl_context: ssl.SSLContext | None = None
    virtual_host: str = "localhost"

    @classmethod
    def from_keywords(cls, options: Mapping[str, Any]) -> ClientOptions:
        known = cls.__dataclass_fields__
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ValueError(
                f"unknown ConnectionFactory option(s) {', '.join(unknown)}; "
                f"the options are {', '.join(known)}"
            )
        values = dict(options)
        if "allowed_classes" in values:
            values["allowed_classes"] = tuple(values["allowed_classes"])
        return cls(**values)

    def __post_init__(self) -> None:
        for name in ("client_id", "user", "password"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"option {name} must be a str or None; got {value!r}")
        if type(self.prefetch) is not int or self.prefetch < 1:
            raise ValueError(f"option prefetch must be an int of at least 1; got {self.prefetch!r}")
        if self.max_deliveries is not None and (
            type(self.max_deliveries) is not int or self.max_deliveries < 1
        ):
            raise ValueError(
                "option max_deliveries must be an int of at least 1 or None; "
                f"got {self.max_deliveries!r}"
            )
        if not isinstance(self.virtual_host, str) or not self.virtual_host:
            raise TypeError(
                f"option virtual_host must be a non-empty str; got {self.virtual_host!r}"
            )
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise TypeError(
                f"option ssl_context must be an ssl.SSLContext; got {self.ssl_context!r}"
            )
        for allowed in self.allowed_classes:
            if not isinstance(allowed, type | str):
                raise TypeError(
                    f"option allowed_classes holds classes or 'module.QualName' strings; "
                    f"got {allowed!r}"
                )
