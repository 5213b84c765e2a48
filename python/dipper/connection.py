"""Connections and results: dipper.connect(), con.sql(), con.execute().

Owns: the handle (dipper_open/dipper_close) and the programs compiled on it,
the run of statements to a result (dipper_execute's Arrow C stream imported
into pyarrow without a copy), foreachBatch callbacks in Python, memory
tables, and making a long call interruptible by Ctrl-C.  Streaming query
handles and the listener bus are streaming.py's.

Lifetimes follow dipper.h: a stream borrows its program, a program and its
queries borrow the handle.  So a Program keeps its Connection alive, a
stream reader keeps its Program alive, and Connection.close() first stops
and frees the queries, then the programs, then closes the handle.

Threads: ctypes releases the GIL during every C call.  A call that may run
long (execute, run, await, listen) runs on a worker thread while the main
thread waits, so that Ctrl-C reaches Python: the wait then calls
dipper_interrupt (thread-safe), the call returns DIPPER_INTERRUPTED, the
queries are stopped, and KeyboardInterrupt is raised.
"""

import ctypes
import itertools
import threading
import traceback as _tb
import warnings as _warnings
import weakref

import pyarrow as pa

from . import _capi, _memory, errors
from ._capi import lib


# ---- foreachBatch callbacks: one trampoline for every registration ----

_registrations = {}   # token -> (weakref to the Connection, fn)
_tokens = itertools.count(1)


def _record_failure(con_ref, text):
    con = con_ref()
    if con is not None:
        con._callback_failures.append(text)


@_capi.BATCH_FN
def _batch_trampoline(user, batch_id, schema_p, array_p):
    reg = _registrations.get(user)
    try:
        batch = pa.RecordBatch._import_from_c(ctypes.cast(array_p, ctypes.c_void_p).value,
                                              ctypes.cast(schema_p, ctypes.c_void_p).value)
    except BaseException:
        # not moved: release what C handed over, as the contract says
        if array_p.contents.release:
            array_p.contents.release(ctypes.cast(array_p, ctypes.c_void_p).value)
        if schema_p.contents.release:
            schema_p.contents.release(ctypes.cast(schema_p, ctypes.c_void_p).value)
        if reg:
            _record_failure(reg[0], _tb.format_exc())
        return 1
    if reg is None:
        return 1
    try:
        reg[1](batch, int(batch_id))
    except BaseException:
        _record_failure(reg[0], _tb.format_exc())
        return 1
    return 0


@_capi.FREE_FN
def _free_trampoline(user):
    _registrations.pop(user, None)


# Arrow's month interval (an INTERVAL YEAR TO MONTH, format "tiM") has no
# Python class in pyarrow: a column of it cannot even be looked at.  Such a
# field is imported as int32 (the same 4-byte layout: the number of months),
# its metadata saying what it was; no bytes move.
_MONTHS_META = {b"dipper.type": b"INTERVAL YEAR TO MONTH"}


def _no_month_interval(t):
    """t with every month_interval (nested too) as int32, or None if none."""
    if str(t) == "month_interval":
        return pa.int32()
    if pa.types.is_struct(t):
        fs = [_no_month_field(t.field(i)) for i in range(t.num_fields)]
        return pa.struct([f or t.field(i) for i, f in enumerate(fs)]) if any(fs) else None
    if pa.types.is_map(t):
        k, v = _no_month_field(t.key_field), _no_month_field(t.item_field)
        return pa.map_(k or t.key_field, v or t.item_field) if k or v else None
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        v = _no_month_field(t.value_field)
        return (pa.list_ if pa.types.is_list(t) else pa.large_list)(v) if v else None
    return None


def _no_month_field(f):
    t = _no_month_interval(f.type)
    if t is None:
        return None
    meta = dict(f.metadata or {})
    if str(f.type) == "month_interval":
        meta.update(_MONTHS_META)
    return pa.field(f.name, t, f.nullable, metadata=meta or None)


def _without_month_intervals(reader):
    fields = [_no_month_field(f) for f in reader.schema]
    if not any(fields):
        return reader
    schema = pa.schema([f or reader.schema.field(i) for i, f in enumerate(fields)],
                       metadata=reader.schema.metadata)

    def batches():
        with reader:
            for b in reader:
                arr = _capi.ArrowArray()
                b._export_to_c(ctypes.addressof(arr))
                yield pa.RecordBatch._import_from_c(ctypes.addressof(arr), schema)
    return pa.RecordBatchReader.from_batches(schema, batches())


# ---- programs ----


class Checked(list):
    """What Connection.check gives: the statements' kinds, and in
    `warnings` the program's warnings (dipper.Diagnostic)."""
    warnings = ()


class Program:
    """A compiled list of statements (dipper_program).  Freed when the last
    reference goes, or by Connection.close()."""

    def __init__(self, con, ptr, text):
        self.con = con
        self.ptr = ptr
        self.text = text
        self.count = lib.dipper_program_count(ptr)
        self.streaming = bool(lib.dipper_program_streaming(ptr))
        kinds = []
        for i in range(self.count):
            k = ctypes.c_int()
            errors.check(lib.dipper_program_stmt_kind(ptr, i, ctypes.byref(k)), con._db)
            kinds.append(k.value)
        self.kinds = kinds

    def free(self):
        if self.ptr:
            lib.dipper_program_free(self.ptr)
            self.ptr = None

    def __del__(self):
        try:
            if self.ptr and self.con._db:
                self.free()
        except Exception:  # at interpreter exit the module may be gone already
            pass


_KIND_NAMES = {_capi.STMT_SESSION: "session", _capi.STMT_QUERY: "query",
               _capi.STMT_INSERT: "insert", _capi.STMT_RESULT: "result"}


class Result:
    """The rows of one statement, as DuckDB's relation gives them: run on
    the first fetch (dipper_execute) and kept; .arrow() is the pyarrow Table
    built on dipper's own buffers (no copy), the others convert from it."""

    def __init__(self, program, stmt, table=None):
        self._program = program
        self._stmt = stmt
        self._table = table

    def _reader(self):
        prog = self._program
        con = prog.con
        con._check_open()
        stream = _capi.ArrowArrayStream()
        rc = con._blocking(lib.dipper_execute, prog.ptr, self._stmt, ctypes.byref(stream))
        try:
            con._check(rc)
        except errors.by_code[7] as e:  # STREAMING: say it in Python's words too
            if "dipper_query_start" in str(e):
                e.args = (e.args[0] + "\n(from Python: con.start(script) starts it as a "
                          "streaming query)",)
            raise
        try:
            reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(stream))
        except BaseException:
            if stream.release:
                stream.release(ctypes.addressof(stream))
            raise
        return _without_month_intervals(reader)

    def arrow(self):
        """The rows as a pyarrow.Table."""
        if self._table is None:
            reader = self._reader()
            try:
                self._table = reader.read_all()
            finally:
                reader.close()  # the stream is released before its program can be
        return self._table

    to_arrow_table = arrow
    fetch_arrow_table = arrow

    def record_batch_reader(self):
        """The rows as a pyarrow.RecordBatchReader over the result's batches
        (the statement runs now; the reader keeps the program alive)."""
        if self._table is not None:
            return self._table.to_reader()
        reader = self._reader()

        # the generator's defaults keep the program alive until it is done
        def batches(reader=reader, program=self._program):
            with reader:
                yield from reader
        return pa.RecordBatchReader.from_batches(reader.schema, batches())

    fetch_record_batch = record_batch_reader

    def df(self):
        """The rows as a pandas.DataFrame."""
        return self.arrow().to_pandas()

    to_df = df
    fetchdf = df

    def pl(self):
        """The rows as a polars.DataFrame (needs polars installed)."""
        try:
            import polars
        except ImportError as e:
            raise ImportError("dipper: .pl() needs polars (pip install polars)") from e
        return polars.from_arrow(self.arrow())

    def fetchall(self):
        """The rows as a list of tuples of Python values (docs/python.md's
        type table)."""
        t = self.arrow()
        cols = [c.to_pylist() for c in t.columns]
        return list(zip(*cols)) if cols else []

    def fetchone(self):
        rows = self.fetchall()
        return rows[0] if rows else None

    @property
    def columns(self):
        return self.arrow().column_names

    @property
    def types(self):
        return [f.type for f in self.arrow().schema]

    def __arrow_c_stream__(self, requested_schema=None):
        return self.arrow().__arrow_c_stream__(requested_schema)

    def __len__(self):
        return self.arrow().num_rows

    def __repr__(self):
        return repr(self.arrow())


# ---- the connection ----

class Connection:
    """A dipper handle: a catalog, session options and an engine, the
    embedded one or a Spark Connect server.  One thread at a time, as the
    handle; close() (or `with`) frees it."""

    def __init__(self, engine=None):
        h = ctypes.c_void_p()
        rc = lib.dipper_open(ctypes.byref(h), engine.encode() if engine else None)
        if rc != _capi.OK:
            err = errors.make(rc, h.value)
            if h.value:
                lib.dipper_close(h.value)
            raise err
        self._db = h.value
        self.engine = engine or "embedded"
        self._programs = weakref.WeakSet()
        self._groups = weakref.WeakSet()
        self._queries = weakref.WeakValueDictionary()  # C query pointer -> Query
        self._callback_failures = []
        self._udf_failures = []  # Python UDFs' errors (already in the C message)
        self._callback_tokens = {}  # lower-cased name -> token
        self._log_fn = None

    # -- lifetime --

    def close(self):
        """Stop and free the queries, free the programs, close the handle.
        Safe to call twice."""
        if not self._db:
            return
        for g in list(self._groups):
            g.free()
        for p in list(self._programs):
            p.free()
        db, self._db = self._db, None
        lib.dipper_close(db)
        self._log_fn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _check_open(self):
        if not self._db:
            raise errors.by_code[2]("dipper: the connection is closed")

    def _check(self, rc):
        """Raise the error of a failing call, with the traceback of a Python
        callback that failed the query, if one did."""
        if rc != _capi.OK:
            tb = "\n".join(self._callback_failures) or None
            udf = "\n".join(self._udf_failures) or None
            self._callback_failures.clear()
            self._udf_failures.clear()
            err = errors.make(rc, self._db, traceback=tb)
            if tb is None and udf is not None:
                err.traceback = udf  # its text holds it already (dipper_function_error)
            raise err
        self._callback_failures.clear()
        self._udf_failures.clear()

    def _blocking(self, fn, *args):
        """fn(*args) so that Ctrl-C interrupts it (see the module's comment)."""
        if threading.current_thread() is not threading.main_thread():
            return fn(*args)
        box = {}
        done = threading.Event()

        def work():
            try:
                box["rc"] = fn(*args)
            except BaseException as e:  # ctypes raises only for bad arguments
                box["exc"] = e
            finally:
                done.set()

        t = threading.Thread(target=work, name="dipper-call", daemon=True)
        t.start()
        try:
            while not done.wait(3600):
                pass
        except KeyboardInterrupt:
            if not done.is_set():
                lib.dipper_interrupt(self._db)
            while not done.is_set():
                try:
                    done.wait()
                except KeyboardInterrupt:  # a second Ctrl-C: still wait for C to stop
                    pass
            t.join()
            self._stop_running()
            raise
        t.join()
        if "exc" in box:
            raise box["exc"]
        return box["rc"]

    def _stop_running(self):
        for g in list(self._groups):
            g.stop_all()

    def interrupt(self):
        """Ask the running call on this connection (from another thread) to
        stop: dipper_interrupt."""
        if self._db:
            lib.dipper_interrupt(self._db)

    # -- compiling --

    def _compile(self, text, filename=None):
        self._check_open()
        data = text.encode("utf-8")
        out = ctypes.c_void_p()
        rc = lib.dipper_compile(self._db, data, len(data),
                                filename.encode() if filename else None, ctypes.byref(out))
        self._check(rc)
        prog = Program(self, out.value, text)
        self._programs.add(prog)
        return prog

    def _run_statement(self, prog, i):
        Result(prog, i).arrow()

    def sql(self, text, filename=None):
        """Compile `text` (one or more statements); run those before the last
        that run something (INSERTs); then the last: a query or SHOW /
        DESCRIBE / EXPLAIN gives a Result (run when first fetched), anything
        else runs now and gives None."""
        prog = self._compile(text, filename)
        for i in range(prog.count - 1):
            if prog.kinds[i] in (_capi.STMT_INSERT, _capi.STMT_QUERY):
                self._run_statement(prog, i)
        if not prog.count:
            return None
        last = prog.kinds[-1]
        if last in (_capi.STMT_QUERY, _capi.STMT_RESULT):
            return Result(prog, prog.count - 1)
        if last == _capi.STMT_INSERT:
            self._run_statement(prog, prog.count - 1)
        return None

    query = sql

    def execute(self, script, filename=None):
        """Run every statement of `script` now, in order, and give the Result
        of the last one that has rows (already fetched), or an empty one."""
        prog = self._compile(script, filename)
        last = None
        for i, k in enumerate(prog.kinds):
            if k == _capi.STMT_SESSION:
                continue
            r = Result(prog, i)
            r.arrow()
            if k in (_capi.STMT_QUERY, _capi.STMT_RESULT):
                last = r
        return last if last is not None else Result(prog, -1, pa.table({}))

    def run(self, script, on_progress=None, filename=None):
        """Run a whole program as `dipper run` does (dipper_run): every query
        by its trigger until all have finished, or Ctrl-C.  on_progress gets
        a dipper.Progress after every micro-batch."""
        from .streaming import Progress
        prog = self._compile(script, filename)
        fn = _capi.PROGRESS_FN()
        failures = []
        if on_progress is not None:
            def cb(user, p):
                try:
                    on_progress(Progress._of(p.contents))
                except BaseException as e:
                    failures.append(e)
            fn = _capi.PROGRESS_FN(cb)
        rc = self._blocking(lib.dipper_run, prog.ptr, fn, None)
        self._check(rc)
        if failures:
            raise failures[0]
        prog.free()

    def explain(self, sql, json=False, schema=True, streaming=True, filename=None):
        """The logical plan of every query and INSERT of `sql` as text
        (dipper_explain), or as a dict with json=True."""
        prog = self._compile(sql, filename)
        flags = (0 if schema else _capi.EXPLAIN_NO_SCHEMA) | \
                (0 if streaming else _capi.EXPLAIN_NO_STREAMING) | \
                (_capi.EXPLAIN_JSON if json else 0)
        out = ctypes.c_void_p()
        self._check(lib.dipper_explain(prog.ptr, flags, ctypes.byref(out)))
        try:
            s = ctypes.string_at(out.value).decode("utf-8")
        finally:
            lib.dipper_free(out.value)
            prog.free()
        if json:
            import json as _json
            return _json.loads(s)
        return s

    def check(self, sql, filename=None):
        """Compile `sql` (parse, bind, validate) without running it; raise
        its first error.  Gives the kind of each statement ("session",
        "query", "insert", "result"), a list whose `warnings` attribute holds
        the program's warnings (dipper.Diagnostic: streaming state that grows
        forever, naming the operator and 'table.exec.state.ttl'), which are
        also issued through Python's warnings module as dipper.CompileWarning, as
        `dipper check` prints them.  As in dipper_compile, DDL and SET
        statements of the text take effect in this connection's catalog."""
        prog = self._compile(sql, filename)
        try:
            found = errors.program_warnings(prog.ptr)
            kinds = Checked(_KIND_NAMES[k] for k in prog.kinds)
        finally:
            prog.free()
        kinds.warnings = found
        for w in found:
            _warnings.warn(w.rendered, errors.CompileWarning, stacklevel=2)
        return kinds

    # -- streaming (streaming.py) --

    def start(self, script, filename=None):
        """Start one streaming query per INSERT / SELECT of `script`
        (dipper_query_start) and give their handles (dipper.Query).  On the
        embedded engine a query advances inside the calls that wait for it:
        await_termination, process_all_available, listen, step."""
        from .streaming import start
        return start(self, self._compile(script, filename))

    def listen(self, timeout=None):
        """Iterate over the listener bus's events (dipper.QueryEvent) of this
        connection's running queries, until every one has ended, `timeout`
        seconds pass, or the loop is left (break)."""
        from .streaming import listen
        return listen(self, timeout)

    def active_queries(self):
        """The handles of this connection's queries that are active now."""
        self._check_open()
        n = ctypes.c_int()
        cap = 64
        arr = (ctypes.c_void_p * cap)()
        self._check(lib.dipper_active_queries(self._db, arr, cap, ctypes.byref(n)))
        return [self._queries[p] for p in arr[:min(n.value, cap)] if p in self._queries]

    # -- the library's own messages --

    def set_log(self, fn):
        """Receive the library's messages that are not a call's error
        (dipper_set_log): fn(level, message) with level "warning", "note" or
        "debug" (the Kafka client's own log).  It may be called from the
        library's threads.  None (the default) keeps the library quiet.
        Set it before starting queries."""
        self._check_open()
        if fn is None:
            lib.dipper_set_log(self._db, _capi.LOG_FN(), None)
            self._log_fn = None
            return
        levels = {1: "warning", 2: "note", 3: "debug"}

        def on_log(user, level, message):
            try:
                fn(levels.get(level, str(level)), _capi.text(message))
            except BaseException:  # a logger must not break the engine
                pass
        cb = _capi.LOG_FN(on_log)
        lib.dipper_set_log(self._db, cb, None)
        self._log_fn = cb  # kept alive as long as the handle may call it

    # -- foreachBatch --

    def register_callback(self, name, fn):
        """Call fn(batch: pyarrow.RecordBatch, batch_id: int) for each
        micro-batch of a sink WITH ('connector' = 'callback', 'name' = name),
        in the queries started from now on.  An exception in fn fails the
        query; its error carries the Python traceback."""
        self._check_open()
        if not callable(fn):
            raise TypeError("dipper: register_callback needs a callable")
        token = next(_tokens)
        _registrations[token] = (weakref.ref(self), fn)
        rc = lib.dipper_register_callback2(self._db, name.encode(), _batch_trampoline,
                                           token, _free_trampoline)
        if rc != _capi.OK:
            _registrations.pop(token, None)
            self._check(rc)
        self._callback_tokens[name.lower()] = token

    def unregister_callback(self, name):
        self._check_open()
        self._check(lib.dipper_unregister_callback(self._db, name.encode()))
        self._callback_tokens.pop(name.lower(), None)

    # -- Python functions (udf.py) --

    def create_function(self, name, fn=None, *, returns=None, params=None, deterministic=True):
        """Make a Python function callable from SQL on this connection
        (dipper_create_scalar_function), for the statements compiled from
        now on: con.create_function(f) with a dipper.Function (@dipper.udf),
        or con.create_function("name", fn, returns="DOUBLE", params=["DOUBLE"]).
        fn is called once per batch of rows with one pyarrow.Array per
        argument and returns one value per row (a pyarrow.Array of the
        result type, or what pyarrow.array() takes); `params` default to
        fn's annotations, `returns` to its result's.  Gives the Function.
        A function of the same name is replaced."""
        from .udf import Aggregate, Function, create, create_aggregate  # (dipper.udf is the
        # decorator, not the module)
        if isinstance(name, Aggregate):
            if fn is not None or returns is not None or params is not None:
                raise TypeError("dipper: create_function(agg) with a dipper.Aggregate takes its "
                                "types from it; give no fn, returns or params")
            return create_aggregate(self, name)
        if isinstance(name, Function):
            if fn is not None or returns is not None or params is not None:
                raise TypeError("dipper: create_function(f) with a dipper.Function takes its "
                                "types from it; give no fn, returns or params")
            func = name
        elif callable(name) and fn is None:
            func = Function(name, returns=returns, params=params, deterministic=deterministic)
        else:
            if not isinstance(name, str):
                raise TypeError("dipper: create_function(name, fn, ...) needs a name, not %r"
                                % (name,))
            if isinstance(fn, Function):
                fn = fn.fn
            func = Function(fn, name=name, returns=returns, params=params,
                            deterministic=deterministic)
        return create(self, func)

    def create_aggregate_function(self, name, update, combine, finalize, *, state, returns,
                                  params=None, initial=None, deterministic=True):
        """Make a Python aggregate callable from SQL on this connection
        (dipper_create_aggregate_function), as @dipper.udaf does from a
        class: update(state, *arrays) -> state gets one group's rows of a
        batch as pyarrow arrays, combine(a, b) -> state merges two,
        finalize(state) -> value.  `state` is a SQL type or a dict of
        field -> type (BOOLEAN, integers, FLOAT, DOUBLE: plain bytes that
        checkpoints keep); `initial` a new group's state (zeros)."""
        from .udf import Aggregate, create_aggregate
        return create_aggregate(self, Aggregate(name, update, combine, finalize, state, returns,
                                                params=params, initial=initial,
                                                deterministic=deterministic))

    def udf(self, fn=None, *, returns=None, params=None, name=None, deterministic=True):
        """A decorator: @con.udf(returns="DOUBLE") registers the function on
        this connection at once (create_function) and gives the Function."""
        from .udf import Function, create

        def make(f):
            return create(self, Function(f, name=name, returns=returns, params=params,
                                         deterministic=deterministic))
        return make(fn) if fn is not None else make

    def drop_function(self, name):
        """Forget a Python (or SQL) function, as DROP FUNCTION does; its
        Python function is released once no program calling it is left."""
        self._check_open()
        self._check(lib.dipper_drop_function(self._db, name.encode()))

    # -- memory tables --

    def push(self, table, data):
        """Append rows to a memory table (one push is one micro-batch of its
        source): a pyarrow Table or RecordBatch, a pandas DataFrame, or a
        list of dicts."""
        self._check_open()
        payload = _memory.json_lines(data)
        self._check(lib.dipper_memory_push_json(self._db, table.encode(), payload, len(payload)))

    def fetch(self, table):
        """Every row written so far to a memory sink, as a pyarrow.Table."""
        self._check_open()
        schema, array = _capi.ArrowSchema(), _capi.ArrowArray()
        self._check(lib.dipper_memory_fetch(self._db, table.encode(), ctypes.byref(schema),
                                            ctypes.byref(array)))
        batch = pa.RecordBatch._import_from_c(ctypes.addressof(array), ctypes.addressof(schema))
        return pa.Table.from_batches([batch])

    def register(self, name, data, bounded=None):
        """Declare a memory table `name` with the columns of `data` (a pyarrow
        Table, a pandas DataFrame or a list of dicts) and push its rows, as
        DuckDB's register.  bounded=True ends its input once every push is
        read (the default in batch mode)."""
        schema = _memory.arrow_schema(data)
        cols = ", ".join("`%s` %s" % (f.name, _memory.sql_type(f.type)) for f in schema)
        opts = "'connector' = 'memory'"
        if bounded is not None:
            opts += ", 'bounded' = '%s'" % ("true" if bounded else "false")
        self.sql("CREATE TABLE `%s` (%s) WITH (%s)" % (name, cols, opts))
        self.push(name, data)


def connect(engine=None):
    """Open a connection: dipper.connect() for the embedded engine,
    dipper.connect("sc://host:15002") for a Spark Connect server (the
    connection is made by the first call that runs something there)."""
    return Connection(engine)
