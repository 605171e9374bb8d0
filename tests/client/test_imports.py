"""What importing the client costs: a process that reaches a broker over STOMP (a Spark task, the
Python process Spark starts for each streaming query, a script) imports neither the broker engine
nor the store layer; they come with the first embedded broker."""

from __future__ import annotations

import subprocess
import sys

_ENGINE = ("jms.broker.broker", "jms.store.sqlite", "jms.store.location", "jms.client.inprocess")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return set(result.stdout.split())


def test_the_client_and_the_spark_source_import_no_broker_engine() -> None:
    loaded = _loaded_after("import jms, jms.client\nimport jms.spark.datasource")
    assert "jms.client.stomp_transport" in loaded
    assert not loaded & set(_ENGINE)
    # Nor the sink's encoder (numpy's and Arrow's compute layer): writers import it when made.
    assert not loaded & {"jms.spark.sink", "jms.spark.arrow_encode", "pyarrow.compute"}


def test_the_engine_comes_with_the_first_embedded_broker() -> None:
    loaded = _loaded_after(
        "from jms import ConnectionFactory\n"
        "from jms.broker import Broker, DEAD_LETTER_REASON\n"
        "assert Broker.__module__ == 'jms.broker.broker' and DEAD_LETTER_REASON\n"
        "with ConnectionFactory('memory://imports').create_connection() as connection:\n"
        "    connection.create_session()"
    )
    assert set(_ENGINE) - {"jms.store.location"} <= loaded


def test_an_unknown_name_of_the_broker_package_is_an_attribute_error() -> None:
    loaded = _loaded_after(
        "import jms.broker\n"
        "try:\n"
        "    jms.broker.Brokre\n"
        "except AttributeError as error:\n"
        "    assert \"no attribute 'Brokre'\" in str(error)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')"
    )
    assert "jms.broker.broker" not in loaded
