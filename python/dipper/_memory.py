"""Rows from Python into dipper's `memory` connector.

Owns: turning a pyarrow Table/RecordBatch, a pandas DataFrame, or a list of
dicts into the JSON lines that dipper_memory_push_json takes (the C API's
one way in: one push is one micro-batch), and the SQL column types of a
pyarrow schema for Connection.register.  JSON is the C API's form, so a push
is a copy and a text encoding; results (out of dipper) are never copied.
"""

import base64
import datetime
import decimal
import json
import math

import pyarrow as pa
import pyarrow.compute as pc


def _value(v):
    """One Python value as JSON-ready data, in the forms dipper's JSON
    decoder reads (docs/python.md's type table)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return v.isoformat(sep=" ", timespec="microseconds")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, datetime.time):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, dict):
        return {str(k): _value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        # pyarrow gives a MAP as a list of (key, value) pairs
        return [_value(x) for x in v]
    if hasattr(v, "item"):  # a numpy scalar
        return _value(v.item())
    if hasattr(v, "to_pydatetime"):  # a pandas Timestamp
        return _value(v.to_pydatetime())
    raise TypeError("dipper: cannot send a %s to a memory table" % type(v).__name__)


def _map_fields(schema):
    return [f.name for f in schema if pa.types.is_map(f.type)]


def _rows_of_arrow(data):
    maps = _map_fields(data.schema)
    for row in data.to_pylist():
        for m in maps:  # MAP: pyarrow's list of pairs -> a JSON object
            if row[m] is not None:
                row[m] = {k: v for k, v in row[m]}
        yield row


def rows(data):
    """The rows of `data` as dicts."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return _rows_of_arrow(data)
    if hasattr(data, "__arrow_c_stream__") and not isinstance(data, (list, tuple)):
        return _rows_of_arrow(pa.table(data))
    mod = type(data).__module__ or ""
    if mod.startswith("pandas"):
        return _rows_of_arrow(pa.Table.from_pandas(data, preserve_index=False))
    if isinstance(data, dict):
        raise TypeError("dipper: a memory table takes rows (a list of dicts), a pyarrow "
                        "Table or a pandas DataFrame, not one dict")
    return iter(data)


# ---- Arrow data encoded column by column (pyarrow.compute) ----
#
# The same JSON lines as the row path below, for the types whose JSON text
# pyarrow's casts write exactly as the row path does: numbers, booleans,
# strings, dates, timestamps, decimals.  Nested, binary, time and
# dictionary columns, and strings with control characters other than
# \n \r \t, take the row path (a batch at a time).  Arrow casts floats to
# their shortest round-trip text (float32 widened to float64 first, as the
# row path's Python floats are) and timestamps to "YYYY-MM-DD HH:MM:SS.ffffff"
# after a cast to microseconds (UTC for a zoned one), dipper's precision.

def _fast_type(t):
    T = pa.types
    return (T.is_boolean(t) or T.is_integer(t) or T.is_floating(t) or T.is_string(t)
            or T.is_large_string(t) or T.is_date32(t) or T.is_timestamp(t) or T.is_decimal(t))


_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")]


def _quoted(col):
    return pc.binary_join_element_wise('"', col, '"', "")


def _json_column(col):
    """The JSON text of each value of `col`, "null" for NULL; None when
    the column needs the row path."""
    T = pa.types
    t = col.type
    if T.is_boolean(t) or T.is_integer(t):
        text = pc.cast(col, pa.string())
    elif T.is_floating(t):
        d = pc.cast(col, pa.float64())
        text = pc.cast(d, pa.string())
        inf = pc.is_inf(d)
        text = pc.if_else(pc.is_nan(d), '"NaN"', text)
        text = pc.if_else(pc.and_(inf, pc.greater(d, 0.0)), '"Infinity"', text)
        text = pc.if_else(pc.and_(inf, pc.less(d, 0.0)), '"-Infinity"', text)
    elif T.is_string(t) or T.is_large_string(t):
        col = pc.cast(col, pa.string())
        for old, new in _ESCAPES:
            col = pc.replace_substring(col, old, new)
        if pc.any(pc.match_substring_regex(col, "[\\x00-\\x1f]")).as_py():
            return None
        text = _quoted(col)
    elif T.is_date32(t) or T.is_decimal(t):
        text = _quoted(pc.cast(col, pa.string()))
    elif T.is_timestamp(t):
        v = pc.cast(col, pa.int64())  # since the epoch in t.unit, UTC for a zoned one
        if t.unit in ("s", "ms"):
            us = pc.multiply(v, 1_000_000 if t.unit == "s" else 1000)
        elif t.unit == "ns":  # floored to microseconds, as a datetime holds them
            q = pc.divide(v, 1000)
            us = pc.subtract(q, pc.cast(pc.greater(pc.multiply(q, 1000), v), pa.int64()))
        else:
            us = v
        text = _quoted(pc.cast(pc.cast(us, pa.timestamp("us")), pa.string()))
    else:
        return None
    return pc.fill_null(text, "null")


def _fast_batch(batch):
    """The JSON lines of a RecordBatch of fast types, or None."""
    if batch.num_rows == 0:
        return b""
    parts = []
    for i, f in enumerate(batch.schema):
        text = _json_column(batch.column(i))
        if text is None:
            return None
        key = json.dumps(str(f.name), ensure_ascii=False) + ":"
        parts += [("{" if i == 0 else ",") + key, text]
    if not parts:
        return None
    lines = pc.binary_join_element_wise(*parts, "}\n", "")  # no NULLs: every part is text
    offsets = memoryview(lines.buffers()[1]).cast("i")
    data = memoryview(lines.buffers()[2])
    return data[offsets[lines.offset]:offsets[lines.offset + len(lines)]]


_SLICE = 65536  # rows per encoded slice: its text stays far below string's 2 GiB


def _arrow_json_lines(data):
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    out = []
    for batch in data.to_batches(max_chunksize=_SLICE):
        fast = None
        if all(_fast_type(f.type) for f in batch.schema):
            fast = _fast_batch(batch)
        out.append(fast if fast is not None else _row_json_lines(_rows_of_arrow(batch)))
    return b"".join(out)


def _arrow_of(data):
    """`data` as a pyarrow Table or RecordBatch, or None for rows."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    if hasattr(data, "__arrow_c_stream__") and not isinstance(data, (list, tuple)):
        return pa.table(data)
    if (type(data).__module__ or "").startswith("pandas"):
        return pa.Table.from_pandas(data, preserve_index=False)
    return None


def json_lines(data):
    """The JSON lines of `data` (one line per row), for
    dipper_memory_push_json."""
    arrow = _arrow_of(data)
    if arrow is not None:
        return _arrow_json_lines(arrow)
    return _row_json_lines(rows(data))


def _row_json_lines(rows_):
    out = []
    for row in rows_:
        if not isinstance(row, dict):
            raise TypeError("dipper: each row must be a dict of column -> value, not %s"
                            % type(row).__name__)
        out.append(json.dumps({str(k): _value(v) for k, v in row.items()},
                              ensure_ascii=False, allow_nan=False))
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def sql_type(t):
    """The SQL type of a pyarrow type (docs/python.md's type table)."""
    T = pa.types
    simple = [(T.is_boolean, "BOOLEAN"), (T.is_int8, "TINYINT"), (T.is_int16, "SMALLINT"),
              (T.is_int32, "INT"), (T.is_int64, "BIGINT"), (T.is_uint8, "SMALLINT"),
              (T.is_uint16, "INT"), (T.is_uint32, "BIGINT"), (T.is_float16, "FLOAT"),
              (T.is_float32, "FLOAT"), (T.is_float64, "DOUBLE"), (T.is_string, "STRING"),
              (T.is_large_string, "STRING"), (T.is_binary, "BYTES"),
              (T.is_large_binary, "BYTES"), (T.is_date, "DATE"), (T.is_time, "TIME")]
    for test, name in simple:
        if test(t):
            return name
    if T.is_decimal(t):
        return "DECIMAL(%d, %d)" % (t.precision, t.scale)
    if T.is_timestamp(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 6}[t.unit]
        return ("TIMESTAMP_LTZ(%d)" if t.tz else "TIMESTAMP(%d)") % p
    if T.is_map(t):
        return "MAP<%s, %s>" % (sql_type(t.key_type), sql_type(t.item_type))
    if T.is_list(t) or T.is_large_list(t):
        return "ARRAY<%s>" % sql_type(t.value_type)
    if T.is_struct(t):
        return "ROW<%s>" % ", ".join("`%s` %s" % (f.name, sql_type(f.type)) for f in t)
    if T.is_dictionary(t):
        return sql_type(t.value_type)
    raise TypeError("dipper: no SQL type for the Arrow type %s" % t)


def arrow_schema(data):
    """The pyarrow schema of `data` (inferred for a list of dicts)."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data.schema
    mod = type(data).__module__ or ""
    if mod.startswith("pandas"):
        return pa.Schema.from_pandas(data, preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data).schema
    return pa.Table.from_pylist(list(data)).schema
