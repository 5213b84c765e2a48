#!/usr/bin/env python3
"""gen.py - writes the Arrow IPC fixtures of tests/spark/arrow_ipc_test.c.

Run with the Spark venv's python (it has pyarrow):
    $(scripts/spark-local python) tests/spark/arrow/gen.py

For each fixture NAME it writes NAME.arrows (an IPC stream, as pyarrow writes
it) and NAME.txt, the expected decoding rendered as text: one line for the
schema, then per record batch a "batch I rows N" line and one line per row.
The C test renders its decoded arrays the same way and compares.  The
rendering rules are the C test's render_* functions; keep the two in step.
"""
import decimal
import os
import sys

import pyarrow as pa
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- the C Data format of a pyarrow type (only the types used here) ----

def fmt(t):
    T = pa.types
    simple = [(T.is_null, "n"), (T.is_boolean, "b"), (T.is_int8, "c"), (T.is_uint8, "C"),
              (T.is_int16, "s"), (T.is_uint16, "S"), (T.is_int32, "i"), (T.is_uint32, "I"),
              (T.is_int64, "l"), (T.is_uint64, "L"), (T.is_float32, "f"), (T.is_float64, "g"),
              (T.is_string, "u"), (T.is_large_string, "U"), (T.is_binary, "z"),
              (T.is_large_binary, "Z"), (T.is_date32, "tdD"), (T.is_date64, "tdm")]
    for pred, f in simple:
        if pred(t):
            return f
    units = {"s": "s", "ms": "m", "us": "u", "ns": "n"}
    if T.is_fixed_size_binary(t):
        return "w:%d" % t.byte_width
    if T.is_decimal(t):
        return "d:%d,%d" % (t.precision, t.scale)
    if T.is_time(t):
        return "tt" + units[t.unit]
    if T.is_timestamp(t):
        return "ts%s:%s" % (units[t.unit], t.tz or "")
    if T.is_duration(t):
        return "tD" + units[t.unit]
    if t == pa.month_day_nano_interval():
        return "tin"
    if T.is_map(t):
        return "+m"
    if T.is_large_list(t):
        return "+L"
    if T.is_fixed_size_list(t):
        return "+w:%d" % t.list_size
    if T.is_list(t):
        return "+l"
    if T.is_struct(t):
        return "+s"
    raise ValueError("no format for %s" % t)


def children(t):
    T = pa.types
    if T.is_map(t):
        entries = pa.struct([pa.field(t.key_field.name, t.key_type, nullable=False),
                             t.item_field])
        return [pa.field("entries", entries, nullable=False)]
    if T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t):
        return [t.value_field]
    if T.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    return []


def render_field(f):
    s = "%s:%s%s" % (f.name, fmt(f.type), "?" if f.nullable else "")
    kids = children(f.type)
    if kids:
        s += "<" + ",".join(render_field(k) for k in kids) + ">"
    return s


# ---- values ----

def render_bytes(b):
    out = []
    for c in b:
        if 0x20 <= c < 0x7F and c not in (0x27, 0x5C):
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return "'" + "".join(out) + "'"


def render_decimal(unscaled, scale):
    neg = unscaled < 0
    digits = str(-unscaled if neg else unscaled)
    if scale > 0:
        digits = digits.rjust(scale + 1, "0")
        digits = digits[:-scale] + "." + digits[-scale:]
    return ("-" if neg else "") + digits


def render(s, t):
    T = pa.types
    if not s.is_valid:
        return "null"
    if T.is_boolean(t):
        return "true" if s.as_py() else "false"
    if T.is_integer(t):
        return str(s.as_py())
    if T.is_floating(t):
        return "%.17g" % s.as_py()
    if T.is_string(t) or T.is_large_string(t):
        return render_bytes(s.as_py().encode("utf-8"))
    if T.is_binary(t) or T.is_large_binary(t) or T.is_fixed_size_binary(t):
        return render_bytes(s.as_py())
    if T.is_decimal(t):
        with decimal.localcontext() as ctx:
            ctx.prec = 100  # exact: 38 digits and any scale
            return render_decimal(int(s.as_py().scaleb(t.scale)), t.scale)
    if T.is_date(t) or T.is_time(t) or T.is_timestamp(t) or T.is_duration(t):
        return str(s.value)
    if t == pa.month_day_nano_interval():
        v = s.value
        return "%dm%dd%dns" % (v.months, v.days, v.nanoseconds)
    if T.is_map(t):
        entries = s.values
        items = []
        for i in range(len(entries)):
            e = entries[i]
            items.append(render(e[0], t.key_type) + ": " + render(e[1], t.item_type))
        return "{" + ", ".join(items) + "}"
    if T.is_list(t) or T.is_large_list(t) or T.is_fixed_size_list(t):
        vals = s.values
        return "[" + ", ".join(render(vals[i], t.value_type) for i in range(len(vals))) + "]"
    if T.is_struct(t):
        return "{" + ", ".join(render(s[i], t.field(i).type) for i in range(t.num_fields)) + "}"
    raise ValueError("cannot render %s" % t)


def expected(schema, batches):
    lines = ["schema " + " ".join(render_field(f) for f in schema)]
    for bi, b in enumerate(batches):
        lines.append("batch %d rows %d" % (bi, b.num_rows))
        for r in range(b.num_rows):
            lines.append(" | ".join(render(b.column(c)[r], schema.field(c).type)
                                    for c in range(b.num_columns)))
    return "\n".join(lines) + "\n"


def write(name, schema, batches, options=None, strip_eos=False):
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    data = sink.getvalue().to_pybytes()
    if strip_eos:
        assert data[-8:] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
        data = data[:-8]
    with open(os.path.join(HERE, name + ".arrows"), "wb") as f:
        f.write(data)
    with open(os.path.join(HERE, name + ".txt"), "w") as f:
        f.write(expected(schema, batches))


def batch(cols):
    """cols: list of (name, type, values[, nullable])"""
    fields, arrays = [], []
    for c in cols:
        nullable = c[3] if len(c) > 3 else True
        fields.append(pa.field(c[0], c[1], nullable=nullable))
        arrays.append(pa.array(c[2], type=c[1]))
    schema = pa.schema(fields)
    return schema, pa.record_batch(arrays, schema=schema)


D = decimal.Decimal


def main():
    # every fixed-width and boolean type, with nulls and extremes
    s, b = batch([
        ("b", pa.bool_(), [True, False, None, True, False, True, None, False, True]),
        ("i8", pa.int8(), [-128, 127, None, 0, 1, -1, 5, 6, 7]),
        ("i16", pa.int16(), [-32768, 32767, 0, None, 2, 3, 4, 5, 6]),
        ("i32", pa.int32(), [-2**31, 2**31 - 1, 0, 1, None, 3, 4, 5, 6], False),
        ("i64", pa.int64(), [-2**63, 2**63 - 1, 0, 1, 2, None, 4, 5, 6]),
        ("u8", pa.uint8(), [0, 255, 1, 2, 3, 4, None, 6, 7]),
        ("u16", pa.uint16(), [0, 65535, 1, 2, 3, 4, 5, None, 7]),
        ("u32", pa.uint32(), [0, 2**32 - 1, 1, 2, 3, 4, 5, 6, None]),
        ("u64", pa.uint64(), [0, 2**64 - 1, None, 2, 3, 4, 5, 6, 7]),
        ("f32", pa.float32(), [1.5, -0.25, None, 3.4028234663852886e38, float("inf"), 0.1, 7, 8, 9]),
        ("f64", pa.float64(), [1e-300, -2.5, 0.1, None, float("-inf"), 1e300, 7, 8, 9]),
    ])
    write("primitives", s, [b])

    s, b = batch([
        ("s", pa.string(), ["hello", "", None, "h\u00e9llo \u2603", "it's", "a\\b"]),
        ("bin", pa.binary(), [b"\x00\xff", b"", b"abc", None, b"\n", b"x" * 20]),
        ("ls", pa.large_string(), ["large", None, "", "x", "y", "z"]),
        ("lb", pa.large_binary(), [None, b"\x01", b"", b"q", b"r", b"s"]),
        ("fb", pa.binary(3), [b"abc", None, b"\x00\x01\x02", b"xyz", b"   ", b"zzz"]),
    ])
    write("strings", s, [b])

    s, b = batch([
        ("d32", pa.date32(), [0, 19000, None, -719162]),
        ("d64", pa.date64(), [0, 86400000, -86400000, None]),
        ("t32s", pa.time32("s"), [0, 86399, None, 1]),
        ("t32ms", pa.time32("ms"), [None, 86399999, 0, 2]),
        ("t64us", pa.time64("us"), [86399999999, None, 0, 3]),
        ("t64ns", pa.time64("ns"), [86399999999999, 0, None, 4]),
        ("ts_s", pa.timestamp("s"), [0, 1700000000, None, -1]),
        ("ts_ms_ny", pa.timestamp("ms", tz="America/New_York"), [1700000000123, None, 0, 1]),
        ("ts_us", pa.timestamp("us"), [1700000000123456, -1, None, 0]),
        ("ts_us_utc", pa.timestamp("us", tz="UTC"), [None, 1700000000123456, 0, 2]),
        ("ts_ns_off", pa.timestamp("ns", tz="+05:30"), [1700000000123456789, 0, 1, None]),
        ("dur_us", pa.duration("us"), [1000000, -5, None, 0]),
        ("dur_s", pa.duration("s"), [None, 86400, 1, 2]),
        ("mdn", pa.month_day_nano_interval(),
         [pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([-14, 0, 5000]), pa.MonthDayNano([0, 0, 0])]),
    ])
    write("temporal", s, [b])

    s, b = batch([
        ("d10_2", pa.decimal128(10, 2), [D("12345678.90"), D("-0.05"), None, D("0"), D("-99999999.99")]),
        ("d38_10", pa.decimal128(38, 10),
         [D("9999999999999999999999999999.9999999999"), D("-1.0000000001"), D("0.0000000001"), None,
          D("-9999999999999999999999999999.9999999999")]),
        ("d5_0", pa.decimal128(5, 0), [D("12345"), D("-1"), D("0"), D("7"), None]),
        ("d38_0", pa.decimal128(38, 0),
         [D("99999999999999999999999999999999999999"), None, D("-170141183460469231731687303715884105"),
          D("1"), D("-1")]),
    ])
    write("decimal", s, [b])

    inner = pa.struct([("a", pa.int32()), ("m", pa.map_(pa.string(), pa.int64()))])
    s, b = batch([
        ("li", pa.list_(pa.int32()), [[1, 2, None], [], None, [4], [5, 6]]),
        ("lsm", pa.list_(inner),
         [[{"a": 1, "m": [("x", 1), ("y", None)]}, None], None, [],
          [{"a": None, "m": None}, {"a": 3, "m": []}], [{"a": 4, "m": [("z", -1)]}]]),
        ("st", pa.struct([("x", pa.float64()), ("y", pa.list_(pa.string()))]),
         [{"x": 1.5, "y": ["a", None]}, None, {"x": None, "y": None}, {"x": 2.0, "y": []},
          {"x": -0.0, "y": ["b"]}]),
        ("ml", pa.map_(pa.string(), pa.list_(pa.int32())),
         [[("k", [1, 2])], None, [], [("a", None), ("b", [])], [("c", [3])]]),
        ("ll", pa.large_list(pa.string()), [["x"], None, [], ["y", None, "z"], ["w"]]),
        ("fsl", pa.list_(pa.int16(), 2), [[1, 2], None, [None, 4], [5, 6], [7, 8]]),
    ])
    write("nested", s, [b])

    s, b = batch([("n", pa.null(), [None, None, None]),
                  ("i", pa.int32(), [None, None, None]),
                  ("s", pa.string(), [None, None, None]),
                  ("l", pa.list_(pa.int64()), [None, None, None])])
    write("nulls", s, [b])

    s, b = batch([("s", pa.string(), []), ("l", pa.list_(pa.int32()), []),
                  ("st", pa.struct([("a", pa.bool_())]), [])])
    write("empty", s, [b])
    write("schema_only", s, [])

    # sliced arrays: the writer gets offset views into bigger buffers
    s, big = batch([
        ("i", pa.int64(), list(range(20))),
        ("b", pa.bool_(), [i % 3 == 0 if i % 5 else None for i in range(20)]),
        ("s", pa.string(), ["s%d" % i if i % 4 else None for i in range(20)]),
        ("l", pa.list_(pa.int32()), [[i, i + 1] if i % 6 else None for i in range(20)]),
        ("st", pa.struct([("a", pa.int32()), ("b", pa.string())]),
         [{"a": i, "b": str(i)} if i % 7 else None for i in range(20)]),
    ])
    write("sliced", s, [big.slice(3, 11), big.slice(17, 3)])

    # compressed bodies: a mixed batch, compressible
    n = 300
    s, b = batch([
        ("id", pa.int64(), [i if i % 11 else None for i in range(n)]),
        ("name", pa.string(), ["name-%d" % (i % 17) if i % 13 else None for i in range(n)]),
        ("ts", pa.timestamp("us", tz="UTC"), [1700000000000000 + i * 1000 for i in range(n)]),
        ("amt", pa.decimal128(12, 2), [D(i) / 4 if i % 9 else None for i in range(n)]),
        ("ok", pa.bool_(), [i % 2 == 0 for i in range(n)]),
        ("tags", pa.list_(pa.string()), [["t%d" % (i % 3)] * (i % 4) for i in range(n)]),
    ])
    write("lz4", s, [b], options=ipc.IpcWriteOptions(compression="lz4"))
    write("zstd", s, [b], options=ipc.IpcWriteOptions(compression="zstd"))

    # several batches in one stream, one of them empty; and the same without EOS
    s, b = batch([("k", pa.string(), ["a", "b", None, "d", "e"]), ("v", pa.float64(), [1, 2, 3, None, 5])])
    parts = [b.slice(0, 2), b.slice(2, 0), b.slice(2, 3)]
    write("multi", s, parts)
    write("no_eos", s, parts, strip_eos=True)


if __name__ == "__main__":
    sys.exit(main())
