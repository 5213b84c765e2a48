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


def json_lines(data):
    out = []
    for row in rows(data):
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
