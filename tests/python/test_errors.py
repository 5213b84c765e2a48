# Errors as exceptions: one class per DIPPER_* code, with file, line, column
# and the rendered caret.
import pytest

import dipper


def test_one_class_per_code():
    assert issubclass(dipper.SyntaxError, dipper.Error)
    assert dipper.SyntaxError.code == 4 and dipper.SyntaxError.code_name == "SYNTAX"
    assert dipper.CorruptError.code == 19
    names = {c.__name__ for c in dipper.errors.by_code.values()}
    assert len(names) == 19
    assert dipper.SyntaxError is not SyntaxError  # the builtin stays the builtin


def test_syntax_error_carries_place_and_caret(con):
    with pytest.raises(dipper.SyntaxError) as e:
        con.sql("SELECT 1;\nSELECT a FROM t WHERE\n", filename="q.sql")
    err = e.value
    assert err.code == 4
    assert err.file == "q.sql"
    assert err.line == 2
    assert err.column >= 1
    assert err.caret.startswith("q.sql:2:")
    assert err.caret.splitlines()[1] == "   2 | SELECT a FROM t WHERE"
    assert "^" in err.caret
    assert str(err).startswith("q.sql:2:")
    assert err.diagnostics[0].rendered == err.caret


def test_name_error_points_at_the_name(con):
    with pytest.raises(dipper.NameError) as e:
        con.sql("SELECT nope FROM (VALUES (1)) AS t(x)")
    err = e.value
    assert (err.line, err.column, err.length) == (1, 8, 4)
    assert err.caret.splitlines() == [
        "<string>:1:8: error: unknown column `nope`",
        "   1 | SELECT nope FROM (VALUES (1)) AS t(x)",
        "     |        ^~~~"]
    assert "unknown column `nope`" in err.message


def test_type_error(con):
    with pytest.raises(dipper.TypeError) as e:
        con.sql("SELECT 1 + 'a' || TRUE AND 3 AS x")
    assert e.value.line == 1


def test_unbounded_select_is_a_streaming_error(con):
    con.sql("CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen')")
    res = con.sql("SELECT id FROM g")
    with pytest.raises(dipper.StreamingError) as e:
        res.arrow()
    assert e.value.code_name == "STREAMING" and e.value.line == 1
    assert "runtime-mode" in str(e.value)
    assert "con.start(script)" in str(e.value)


def test_option_error_from_create_table(con):
    with pytest.raises(dipper.OptionError) as e:
        con.sql("CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-secnd' = '1')")
    assert "rows-per-second" in str(e.value)  # did you mean


def test_bad_engine_address():
    with pytest.raises(dipper.OptionError) as e:
        dipper.connect("sc://")
    assert e.value.code == 9


def test_bad_record_is_a_data_error(con):
    con.sql("SET 'execution.runtime-mode' = 'batch'")
    con.sql("CREATE TABLE j (k INT) WITH ('connector' = 'memory')")
    con.push("j", [{"k": "nope"}])
    with pytest.raises(dipper.DataError):
        con.sql("SELECT k FROM j").arrow()


def test_closed_connection_is_misuse():
    c = dipper.connect()
    c.close()
    c.close()
    with pytest.raises(dipper.MisuseError):
        c.sql("SELECT 1")


def test_no_server_is_a_connect_error():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there now
    c = dipper.connect("sc://127.0.0.1:%d" % port)  # the address is fine: lazily connected
    assert c.check("SELECT 1 AS x") == ["query"]
    with pytest.raises(dipper.ConnectError) as e:
        c.sql("SELECT 1 AS x").arrow()
    assert "cannot reach Spark Connect at 127.0.0.1:%d" % port in str(e.value)
    c.close()
