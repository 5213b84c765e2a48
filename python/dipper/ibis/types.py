"""dipper's SQL types and Ibis's data types, both ways.

Ibis's Flink type mapper (FlinkType) drops what dipper's tables keep — a
TIMESTAMP's precision, TIMESTAMP_LTZ, BYTES, ROW<...> — so the backend maps
types itself: `to_sql(dtype)` writes the type a CREATE TABLE takes, and
`from_sql(text)` reads the type DESCRIBE prints (docs/sql.md, Types).
"""

import re

import ibis.expr.datatypes as dt

_SIMPLE_TO_SQL = [
    (dt.Boolean, "BOOLEAN"), (dt.Int8, "TINYINT"), (dt.Int16, "SMALLINT"),
    (dt.Int32, "INT"), (dt.Int64, "BIGINT"), (dt.UInt8, "SMALLINT"),
    (dt.UInt16, "INT"), (dt.UInt32, "BIGINT"), (dt.Float32, "FLOAT"),
    (dt.Float64, "DOUBLE"), (dt.String, "STRING"), (dt.Binary, "BYTES"),
    (dt.Date, "DATE"), (dt.JSON, "STRING"), (dt.UUID, "STRING"),
]


def _quote(name):
    return "`%s`" % name.replace("`", "``")


def to_sql(t):
    """The dipper SQL type of an Ibis data type (NOT NULL when it is not
    nullable)."""
    return base_sql(t) + ("" if t.nullable else " NOT NULL")


def base_sql(t):
    """The dipper SQL type of an Ibis data type, without NOT NULL."""
    for cls, name in _SIMPLE_TO_SQL:
        if isinstance(t, cls):
            return name
    if isinstance(t, dt.Decimal):
        p = 38 if t.precision is None else t.precision
        s = (18 if t.precision is None else 0) if t.scale is None else t.scale
        return "DECIMAL(%d, %d)" % (p, s)
    if isinstance(t, dt.Timestamp):
        p = 6 if t.scale is None else min(t.scale, 9)
        return ("TIMESTAMP_LTZ(%d)" if t.timezone is not None else "TIMESTAMP(%d)") % p
    if isinstance(t, dt.Time):
        return "TIME(6)"
    if isinstance(t, dt.Interval):
        unit = t.unit.name
        if unit in ("YEAR", "MONTH"):
            return "INTERVAL YEAR TO MONTH"
        return "INTERVAL DAY TO SECOND(6)"
    if isinstance(t, dt.Array):
        return "ARRAY<%s>" % to_sql(t.value_type)
    if isinstance(t, dt.Map):
        return "MAP<%s, %s>" % (to_sql(t.key_type), to_sql(t.value_type))
    if isinstance(t, dt.Struct):
        return "ROW<%s>" % ", ".join("%s %s" % (_quote(n), to_sql(v)) for n, v in t.items())
    raise TypeError("dipper's Ibis backend: no SQL type for the Ibis type %s" % t)


# ---- reading DESCRIBE's types ----

_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z_0-9$]*|\d+|[<>(),*])")

_NAMED = {
    "BOOLEAN": dt.boolean, "BOOL": dt.boolean, "TINYINT": dt.int8, "SMALLINT": dt.int16,
    "INT": dt.int32, "INTEGER": dt.int32, "BIGINT": dt.int64, "FLOAT": dt.float32,
    "REAL": dt.float32, "DOUBLE": dt.float64, "STRING": dt.string, "TEXT": dt.string,
    "VARCHAR": dt.string, "CHAR": dt.string, "CHARACTER": dt.string, "BYTES": dt.binary,
    "BINARY": dt.binary, "VARBINARY": dt.binary, "DATE": dt.date, "NULL": dt.null,
}


class _Reader:
    def __init__(self, text):
        self.text = text
        self.toks = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                if text[pos:].strip() == "":
                    break
                raise ValueError("dipper's Ibis backend: cannot read the type %r" % text)
            self.toks.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self):
        return self.toks[self.i].upper() if self.i < len(self.toks) else None

    def take(self, want=None):
        tok = self.toks[self.i] if self.i < len(self.toks) else None
        if tok is None or (want is not None and tok.upper() != want):
            raise ValueError("dipper's Ibis backend: cannot read the type %r (expected %s)" %
                             (self.text, want or "more"))
        self.i += 1
        return tok

    def params(self):
        out = []
        if self.peek() == "(":
            self.take("(")
            out.append(int(self.take()))
            while self.peek() == ",":
                self.take(",")
                out.append(int(self.take()))
            self.take(")")
        return out

    def type(self):
        word = self.take().upper()
        if word in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            p = self.params()
            scale = p[0] if p else 6
            ltz = word == "TIMESTAMP_LTZ"
            if self.peek() == "WITH":  # WITH LOCAL TIME ZONE
                for w in ("WITH", "LOCAL", "TIME", "ZONE"):
                    self.take(w)
                ltz = True
            elif self.peek() == "WITHOUT":
                for w in ("WITHOUT", "TIME", "ZONE"):
                    self.take(w)
            t = dt.Timestamp(timezone="UTC" if ltz else None, scale=scale)
        elif word == "TIME":
            self.params()
            t = dt.time
        elif word in ("DECIMAL", "DEC", "NUMERIC"):
            p = self.params()
            t = dt.Decimal(p[0] if p else 10, p[1] if len(p) > 1 else 0)
        elif word == "DOUBLE":
            if self.peek() == "PRECISION":
                self.take()
            t = dt.float64
        elif word == "INTERVAL":
            first = self.take().upper()
            self.params()
            if self.peek() == "TO":
                self.take()
                self.take()
                self.params()
            t = dt.Interval("M" if first.startswith(("YEAR", "MONTH")) else "us")
        elif word == "ARRAY":
            self.take("<")
            v = self.type()
            self.take(">")
            t = dt.Array(v)
        elif word == "MAP":
            self.take("<")
            k = self.type()
            self.take(",")
            v = self.type()
            self.take(">")
            t = dt.Map(k, v)
        elif word == "ROW":
            close = ">" if self.peek() == "<" else ")"
            self.take()
            fields = {}
            while True:
                name = self.take()
                if name[0] in "`\"":
                    name = name[1:-1].replace(name[0] * 2, name[0])
                fields[name] = self.type()
                if self.peek() == "COMMENT":
                    raise ValueError("dipper's Ibis backend: a ROW field COMMENT is not read")
                if self.peek() != ",":
                    break
                self.take(",")
            self.take(close)
            t = dt.Struct(fields)
        elif word in _NAMED:
            self.params()
            if word == "CHARACTER" and self.peek() == "VARYING":
                self.take()
                self.params()
            t = _NAMED[word]
        else:
            raise ValueError("dipper's Ibis backend: unknown SQL type %s in %r" % (word, self.text))
        if self.peek() == "NOT":
            self.take()
            self.take("NULL")
            t = t.copy(nullable=False)
        elif self.peek() == "NULL":
            self.take()
        return t


def from_sql(text, nullable=True):
    """The Ibis data type of a dipper SQL type as DESCRIBE prints it (the
    `*ROWTIME*` / `*PROCTIME*` marks left out)."""
    text = text.replace("*ROWTIME*", "").replace("*PROCTIME*", "").strip()
    r = _Reader(text)
    t = r.type()
    if r.peek() is not None:
        raise ValueError("dipper's Ibis backend: cannot read the type %r" % text)
    return t if nullable or not t.nullable else t.copy(nullable=False)
