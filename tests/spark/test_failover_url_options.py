"""The Spark source and sink take a ``failover:`` URL as option ``url`` (docs/ha.md): readers and
writers reach whichever listed broker answers, over TLS with ``ca`` when the URL lists
``stomp+ssl://`` brokers; a bad failover URL is refused naming the option."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from jms.broker import Broker
from jms.spark.options import SinkOptions
from jms.spark.sink import JmsBatchWriter
from jms.spark.source import JmsBatchReader
from jms.stomp.service import ServerThread
from jms.stomp.tls import ServerTls
from tests.certificates import make_certificates
from tests.spark.test_datasource_classes import (
    _SIMPLE,
    _read,
    _roundtrip,
    _simple_batch,
    _source,
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_batch_write_and_read_through_a_failover_url_of_tls_brokers(tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path)
    tls = ServerTls(certificates.server_cert, certificates.server_key)
    broker = Broker()
    try:
        with ServerThread(broker, port=None, tls_port=0, ssl_context=tls.context()) as served:
            assert served.server is not None
            url = (
                f"failover:(stomp+ssl://localhost:{_free_port()},"
                f"stomp+ssl://localhost:{served.server.tls_port})?randomize=false"
            )
            options = {"url": url, "ca": str(certificates.ca)}
            writer = JmsBatchWriter(
                SinkOptions.parse({**options, "destination": "queue://orders"}, streaming=False),
                _SIMPLE,
            )
            staged = _roundtrip(writer).write(
                iter([_simple_batch([("failed over", "queue://orders", 4, "eu", 1)])])
            )
            writer.commit([staged])
            reader = JmsBatchReader(_source(url, ca=options["ca"]))
            read = _read(reader, list(reader.partitions()))
            assert [m.get_body(str) for m in read] == ["failed over"]
    finally:
        broker.close()


def test_a_bad_failover_url_is_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match=r"option url: failover URL .*unknown option 'retry'"):
        _source("failover:(stomp://h:1)?retry=1", ca="/ca.pem")
    with pytest.raises(
        ValueError, match=r"option ca \('/ca.pem'\) is for a stomp\+ssl:// broker URL"
    ):
        _source("failover:(stomp://h:1,stomp://h:2)", ca="/ca.pem")
