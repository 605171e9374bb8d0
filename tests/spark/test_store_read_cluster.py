"""A destination read straight from its PostgreSQL store on ``local-cluster[2,1,1024]`` (issue
18, docs/spark.md): two executor JVMs each open the database themselves and read their sequence
ranges while the broker that owns the store keeps running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jms.broker import close_embedded_broker
from jms.client import ConnectionFactory
from jms.message import Queue, TextMessage
from tests.spark.conftest import JAVA_MISSING

pytestmark = pytest.mark.spark

_ROOT = Path(__file__).resolve().parents[2]


def test_a_postgresql_store_is_read_on_every_executor_of_a_local_cluster(
    postgresql_url: str,
) -> None:
    if JAVA_MISSING:
        pytest.skip("Spark needs a Java runtime (17+): no `java` on PATH and JAVA_HOME is unset")
    broker_url = f"embedded://{postgresql_url}"
    try:
        with ConnectionFactory(broker_url).create_connection() as connection:
            producer = connection.create_session().create_producer(Queue("stored"))
            sent = []
            for n in range(40):
                message = TextMessage(f"stored {n}")
                producer.send(message)
                sent.append(message)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.spark.store_cluster_child",
                postgresql_url,
                "queue://stored",
            ],
            cwd=_ROOT,
            env={**os.environ, "PYTHONPATH": str(_ROOT)},
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        close_embedded_broker(broker_url)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["executors"] == 2
    assert report["partitions"] == 4
    assert report["ids"] == sorted(m.get_jms_message_id() for m in sent)
    assert report["texts"] == sorted(f"stored {n}" for n in range(40))
