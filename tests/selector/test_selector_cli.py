"""``jms selector``: the parse tree, each condition's result, and the exit status."""

from __future__ import annotations

from typer.testing import CliRunner

from jms.cli import app

runner = CliRunner()


def run(*arguments: str) -> tuple[int, str]:
    result = runner.invoke(app, ["selector", *arguments], env={"COLUMNS": "200"})
    return result.exit_code, result.output


def test_spec_example_prints_tree_and_true() -> None:
    code, output = run(
        "JMSType = 'car' AND color = 'blue' AND weight > 2500",
        "--property",
        "weight=int:3000",
        "--property",
        "color=blue",
        "--header",
        "JMSType=car",
    )
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0] == "AND  → TRUE"
    assert "JMSType  (header, String)" in output
    assert "weight  (property)" in output
    assert "2500  (int)" in output
    assert lines[-1] == "result: TRUE"


def test_false_and_unknown_exit_1_and_show_which_condition() -> None:
    code, output = run(
        "weight > 2500 AND color = 'red'", "-p", "weight=long:3000", "-p", "color=blue"
    )
    assert code == 1
    assert ">  → TRUE" in output and "=  → FALSE" in output
    assert output.splitlines()[-1] == "result: FALSE"
    code, output = run("weight > 2500")
    assert code == 1
    assert output.splitlines()[-1] == "result: UNKNOWN"


def test_invalid_selector_exits_2_with_the_column() -> None:
    code, output = run("color IN ('red', 'blue'")
    assert code == 2
    assert "InvalidSelectorException" in output
    assert "at column 24" in output


def test_property_types() -> None:
    selector = (
        "b = TRUE AND by = 1 AND sh = 2 AND i = 3 AND l = 4 AND f = 0.5 AND d = 1E3 "
        "AND s = 'x:y' AND plain = 'hello' AND url = 'http://h'"
    )
    code, output = run(
        selector,
        *("-p", "b=boolean:TRUE", "-p", "by=byte:1", "-p", "sh=short:2", "-p", "i=int:3"),
        *("-p", "l=long:4", "-p", "f=float:0.5", "-p", "d=double:1e3", "-p", "s=string:x:y"),
        *("-p", "plain=hello", "-p", "url=http://h"),
    )
    assert code == 0, output
    # The type matters: a String '3' is not the int 3.
    assert run("i = 3", "-p", "i=3")[0] == 1


def test_headers() -> None:
    code, output = run(
        "JMSDeliveryMode = 'NON_PERSISTENT' AND JMSPriority = 9 AND JMSTimestamp > 1000 "
        "AND JMSMessageID = 'ID:1' AND JMSCorrelationID = 'c'",
        *("-H", "JMSDeliveryMode=non_persistent", "-H", "JMSPriority=9"),
        *("-H", "JMSTimestamp=1001", "-H", "JMSMessageID=ID:1", "-H", "JMSCorrelationID=c"),
    )
    assert code == 0, output


def test_bad_options_exit_2_and_say_why() -> None:
    code, output = run("a = 1", "-p", "a=int:x")
    assert code == 2 and "not a valid Java int" in output
    code, output = run("a = 1", "-p", "noequals")
    assert code == 2 and "name=type:value" in output
    code, output = run("a = 1", "-H", "JMSExpiration=5")
    assert code == 2 and "use --property" in output
    code, output = run("a = 1", "-H", "JMSPriority=12")
    assert code == 2 and "JMSPriority" in output
    code, output = run("a = 1", "-p", "b=boolean:yes")
    assert code == 2 and "true or false" in output


def test_empty_selector_matches() -> None:
    code, output = run("")
    assert code == 0
    assert "every message matches" in output
