"""engines — running one SQL case on dipper (through its CLI) and on Flink
(through PyFlink, in this process), each giving a table of canonical rows.

Owns: splitting a script into statements, the dipper command lines (batch:
`dipper run --format json`; streaming: the query written by a filesystem
JSON sink, one file per micro-batch, read back batch by batch), and Flink's
side (each statement through execute_sql, the query's rows collected with
their row kinds and the changelog applied).  Does not own: which cases run
or what their SQL is (oracle.py, corpus.py).
"""
import datetime
import glob
import json
import os
import pickle
import re
import subprocess
import time

import compare


class EngineError(Exception):
    """The engine refused the SQL or failed running it; the message is its own."""


def split_statements(sql):
    """Statements of a script, split at ';' outside quotes and comments."""
    out, cur, i, n = [], [], 0, len(sql)
    quote = None
    while i < n:
        c = sql[i]
        if quote:
            cur.append(c)
            if c == quote:
                if i + 1 < n and sql[i + 1] == quote:
                    cur.append(sql[i + 1])
                    i += 1
                else:
                    quote = None
        elif c in "'`\"":
            quote = c
            cur.append(c)
        elif c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c == ";":
            s = "".join(cur).strip()
            if s:
                out.append(s)
            cur = []
        else:
            cur.append(c)
        i += 1
    s = "".join(cur).strip()
    if s:
        out.append(s)
    return out


def _json_values(line):
    """One JSON object's values in column order (duplicate names kept)."""
    return json.loads(line, object_pairs_hook=lambda pairs: [v for _, v in pairs])


# ---- dipper ---------------------------------------------------------------

class Dipper:
    def __init__(self, binary, workdir, timeout=600):
        self.binary = binary
        self.workdir = workdir
        self.timeout = timeout

    def _run(self, args, script_name, sql):
        path = os.path.join(self.workdir, script_name)
        with open(path, "w") as f:
            f.write(sql)
        try:
            p = subprocess.run([self.binary] + args + [path], capture_output=True, text=True,
                               timeout=self.timeout, cwd=self.workdir)
        except subprocess.TimeoutExpired:
            raise EngineError("dipper did not finish within %d s: %s" % (self.timeout, path))
        if p.returncode != 0:
            raise EngineError((p.stderr or p.stdout).strip() or "dipper exited %d" % p.returncode)
        return p.stdout

    def batch(self, name, setup_sql, query):
        """The query's complete answer in batch mode."""
        sql = "SET 'execution.runtime-mode' = 'batch';\n" + setup_sql + "\n" + query.rstrip().rstrip(";") + ";\n"
        out = self._run(["run", "-q", "--format", "json"], name + ".batch.sql", sql)
        return [compare.canon_row(_json_values(line)) for line in out.splitlines() if line.strip()]

    def plan(self, name, setup_sql, query, settings=()):
        """(column types, output modes) of the query, from `dipper explain
        --format json`: the sink is declared with those types."""
        sets = "".join("SET '%s' = '%s';\n" % kv for kv in settings)
        out = self._run(["explain", "--format", "json"], name + ".explain.sql",
                        sets + setup_sql + "\n" + query.rstrip().rstrip(";") + ";\n")
        doc = json.loads(out)
        root = doc[-1]["statements"][-1]["roots"][0]
        types = [re.sub(r"\s+NOT NULL$", "", c["type"]) for c in root["schema"]]
        return types, root.get("modes", [])

    def stream(self, name, setup_sql, query, mode, key_positions, settings=()):
        """The query's final answer in streaming mode: written by a
        filesystem JSON sink (CREATE TABLE AS), one file per micro-batch,
        applied in batch order: every row in append mode, the newest row of
        each key in update mode, the last batch in complete mode."""
        out_dir = os.path.join(self.workdir, name + ".out")
        if os.path.isdir(out_dir):
            for f in os.listdir(out_dir):
                os.unlink(os.path.join(out_dir, f))
        else:
            os.makedirs(out_dir)
        types, modes = self.plan(name, setup_sql, query, settings)
        if not mode:
            mode = "append" if "append" in modes or not modes else modes[0]
        sets = "".join("SET '%s' = '%s';\n" % kv for kv in settings)
        sets += "SET 'dipper.output-mode' = '%s';\n" % mode
        cols = ", ".join("c%d %s" % (i + 1, t) for i, t in enumerate(types))
        sql = (sets + setup_sql + "\nCREATE TABLE oracle_out (%s) WITH ('connector' = 'filesystem', "
               "'path' = '%s', 'format' = 'json');\nINSERT INTO oracle_out %s;\n"
               % (cols, out_dir, query.rstrip().rstrip(";")))
        self._run(["run", "-q"], name + ".stream.sql", sql)
        batches = []
        for path in glob.glob(os.path.join(out_dir, "part-*")):
            m = re.match(r"part-(\d+)-", os.path.basename(path))
            if not m:
                continue
            with open(path) as f:
                rows = [compare.canon_row(_json_values(line)) for line in f if line.strip()]
            batches.append((int(m.group(1)), rows))
        batches = [rows for _, rows in sorted(batches, key=lambda b: b[0])]
        if mode == "update":
            return compare.apply_upserts(batches, key_positions)
        if mode == "complete":
            return batches[-1] if batches else []
        return [r for rows in batches for r in rows]


# ---- Flink ----------------------------------------------------------------

_KINDS = {"INSERT": "+I", "UPDATE_BEFORE": "-U", "UPDATE_AFTER": "+U", "DELETE": "-D"}


class Flink:
    """One JVM for the whole run; a fresh TableEnvironment per case."""

    def __init__(self):
        import flinkenv
        self._flinkenv = flinkenv
        self.jobs = 0
        self.seconds = 0.0  # wall time in run(), every job (refused ones too)

    def env(self, batch):
        return self._flinkenv.table_env(batch=batch)

    def run(self, batch, setup_sql, query, upsert_key=None):
        """The query's final table: batch mode's rows, or in streaming mode
        its changelog applied (+I/+U add a row, -U/-D take one away)."""
        from py4j.protocol import Py4JJavaError
        t0 = time.time()
        try:
            return self._run(batch, setup_sql, query, upsert_key, Py4JJavaError)
        finally:
            self.jobs += 1
            self.seconds += time.time() - t0

    def _run(self, batch, setup_sql, query, upsert_key, Py4JJavaError):
        t = self.env(batch)
        try:
            for stmt in split_statements(setup_sql):
                t.execute_sql(stmt)
            result = t.execute_sql(query.rstrip().rstrip(";"))
            changes = [(kind, compare.canon_row(values)) for kind, values in _collect(result, Py4JJavaError)]
        except Py4JJavaError as e:
            raise EngineError(_java_message(e))
        except Exception as e:  # pyflink wraps some Java errors in its own classes
            if type(e).__module__.startswith("pyflink") or "java" in type(e).__name__.lower():
                raise EngineError(str(e).strip().splitlines()[0] if str(e).strip() else repr(e))
            raise
        try:
            return compare.apply_changelog(changes, upsert_key)
        except ValueError as e:
            raise EngineError("flink's changelog: %s" % e)


# A row's kind as PyFlink pickles it: RowKind.toByteValue().
_KIND_BYTES = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


def _collect(result, Py4JJavaError):
    """Every change of a TableResult as (kind, values), fetched in bulk.

    PyFlink's own iterator (`result.collect()`) costs four or more py4j
    round trips a row, which made a changelog of 25,000 rows (Nexmark q19 in
    streaming mode) take 110 s to read and the job 8.  Here the Java side
    drains the iterator into one list and pickles it whole, as PyFlink's
    DataStream path pickles a value of a list type, and the list crosses in
    one call.  That pickling takes the legacy TypeInformation of the row,
    which leaves date and time values as their packed fields and a FLOAT as
    its text; `_bulk_value` reads them by the column's DataType.  A type it
    cannot pickle falls back to PyFlink's row-by-row conversion of the same
    list (its errors are the query's, as before)."""
    from pyflink.java_gateway import get_gateway
    from pyflink.table.table_result import CloseableIterator
    from pyflink.table.types import _from_java_data_type
    g = get_gateway()
    j_result = result._j_table_result
    schema = j_result.getResolvedSchema()
    j_types = schema.getColumnDataTypes()
    types = [_from_java_data_type(j) for j in j_types]
    j_it = j_result.collect()
    try:
        rows = g.jvm.org.apache.flink.util.CollectionUtil.iteratorToList(j_it)
    finally:
        j_it.close()
    try:
        legacy = g.jvm.org.apache.flink.table.types.utils.TypeConversions.fromDataTypeToLegacyInfo(
            schema.toPhysicalRowDataType())
        blob = g.jvm.org.apache.flink.api.common.python.PythonBridgeUtils.getPickledBytesFromJavaObject(
            rows, g.jvm.org.apache.flink.api.java.typeutils.ListTypeInfo(legacy))
    except Py4JJavaError:
        fields = result._get_java_table_schema().getFieldDataTypes()
        return [(_row_kind(r.get_row_kind()), list(r)) for r in CloseableIterator(rows.iterator(), fields)]
    return [(_KIND_BYTES[bytes(r[0])[0]], [_bulk_value(d, t) for d, t in zip(r[1:], types)])
            for r in pickle.loads(blob)]


def _bulk_value(data, t):
    """One value of `_collect`'s list: `data` as pickled there (a pickle, or
    for a ROW the list of its kind and fields), `t` its PyFlink DataType."""
    from pyflink.table import types as T
    if data is None or len(data) == 0:
        return None
    if isinstance(t, T.RowType):
        return tuple(_bulk_value(d, f.data_type) for d, f in zip(data[1:], t.fields))
    v = pickle.loads(data)
    if v is None:
        return None
    if isinstance(t, T.TimestampType):  # LocalDateTime: year (4 bytes), month .. second, nanos (4)
        b = bytes(v)
        return datetime.datetime(int.from_bytes(b[0:4], "big", signed=True), b[4], b[5], b[6], b[7], b[8],
                                 int.from_bytes(b[9:13], "big") // 1000)
    if isinstance(t, T.DateType):  # LocalDate: year (4 bytes), month, day
        b = bytes(v)
        return datetime.date(int.from_bytes(b[0:4], "big", signed=True), b[4], b[5])
    if isinstance(t, T.TimeType):  # LocalTime: hour, minute, second, nanos (4 bytes)
        b = bytes(v)
        return datetime.time(b[0], b[1], b[2], int.from_bytes(b[3:7], "big") // 1000)
    if isinstance(t, T.FloatType):
        return float(v)
    if isinstance(t, (T.BinaryType, T.VarBinaryType)):
        return bytearray(pickle.loads(x)[0] if isinstance(x, (bytes, bytearray)) else x for x in v)
    if isinstance(t, T.ArrayType):
        return [_bulk_value(e, t.element_type) for e in v]
    if isinstance(t, T.MapType):
        return {_bulk_value(k, t.key_type): _bulk_value(x, t.value_type) for k, x in zip(v[0], v[1])}
    return v


def _row_kind(kind):
    """'+I', '-U', '+U' or '-D' from a pyflink RowKind (whose str() is the
    short form; its name the long one)."""
    text = str(kind)
    if text in _KINDS.values():
        return text
    return _KINDS[getattr(kind, "name", text.split(".")[-1])]


def _java_message(e):
    """The innermost cause of a Java exception, one line."""
    try:
        cause = e.java_exception
        msg = cause.toString()
        while cause.getCause() is not None and cause.getCause() != cause:
            cause = cause.getCause()
            msg = cause.toString()
        return msg.splitlines()[0]
    except Exception:
        return str(e).splitlines()[0]
