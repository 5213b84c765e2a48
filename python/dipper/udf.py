"""Python functions on the embedded engine: @dipper.udf and @dipper.udaf.

Owns: turning a Python function into a dipper C function
(dipper_create_scalar_function, and dipper_create_aggregate_function for
aggregates, at the end of the file): its parameter and result types (SQL
type names, from an explicit list or from the annotations), the
trampolines the engine calls (one CFUNCTYPE per scalar registration, bound
to it; one set that every aggregate shares), the registry that keeps each
Python function and its trampoline alive while the handle may call them,
and the checks of what a function returns.

A call is vectorized, as the C API's: once per batch of rows, each argument
a pyarrow.Array imported from dipper's Arrow C Data array without a copy
(dipper hands the function arrays of its own, exported for the call; the
import takes them over with their release callbacks, so an argument stays
valid if the function keeps it).  The function answers with a pyarrow.Array
of the declared type and the batch's length, or anything pyarrow.array()
turns into one (a list, a numpy array, a pandas Series); it is exported back
(_export_to_c) and dipper copies its values.  A wrong length or type fails
the query with a message saying which.

Threads: the trampoline is a ctypes CFUNCTYPE, so it takes the GIL when the
engine calls it, on whatever thread runs the query, and gives it back when
it returns; between calls the engine runs without it.

Errors: an exception in the function fails the call through
dipper_function_error, so the query's error (DIPPER_DATA, "function NAME:
...") holds the Python exception and its traceback; the exception raised in
Python also carries it as `traceback`, as a failing foreachBatch callback's
does.

Lifetimes: the handle owns each registration; its destroy callback (called
once the function is replaced, dropped or the handle closed, and no program
calling it is left) removes the entry from the registry.  The registry holds
only a weak reference to the connection.
"""

import ctypes
import datetime
import decimal
import inspect
import itertools
import struct
import threading
import traceback as _tb
import weakref

import pyarrow as pa
import pyarrow.compute as pc

from . import _capi, _memory, errors
from ._capi import lib

_functions = {}   # token -> _Registration
_tokens = itertools.count(1)


# ---- SQL types of parameters and results ----

# Annotations read as SQL types: pyarrow array classes (what a vectorized
# function gets), pyarrow types, Python classes, or SQL text.
_ARRAY_CLASSES = [(pa.BooleanArray, "BOOLEAN"), (pa.Int8Array, "TINYINT"),
                  (pa.Int16Array, "SMALLINT"), (pa.Int32Array, "INT"),
                  (pa.Int64Array, "BIGINT"), (pa.FloatArray, "FLOAT"),
                  (pa.DoubleArray, "DOUBLE"), (pa.StringArray, "STRING"),
                  (pa.BinaryArray, "BYTES"), (pa.Date32Array, "DATE")]
_PY_CLASSES = {bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE", str: "STRING",
               bytes: "BYTES", datetime.date: "DATE", datetime.datetime: "TIMESTAMP(6)",
               datetime.time: "TIME(6)", datetime.timedelta: "INTERVAL DAY TO SECOND"}
_PY_NAMES = {c.__name__: t for c, t in _PY_CLASSES.items() if c.__module__ == "builtins"}


def sql_type(t, what):
    """The SQL type text of `t`: SQL text itself, a pyarrow DataType, a
    pyarrow array class (pa.DoubleArray) or a Python class (float)."""
    if isinstance(t, str):
        return _PY_NAMES.get(t, t)  # "float" from `from __future__ import annotations`
    if isinstance(t, pa.DataType):
        return _memory.sql_type(t)
    if isinstance(t, type):
        for cls, name in _ARRAY_CLASSES:
            if t is cls:
                return name
        if t in _PY_CLASSES:
            return _PY_CLASSES[t]
        if t is decimal.Decimal:
            raise TypeError("dipper: %s is a Decimal: give its SQL type with its precision "
                            "and scale, e.g. 'DECIMAL(10, 2)'" % what)
    raise TypeError("dipper: %s: no SQL type for %r; give a SQL type name ('DOUBLE', "
                    "'DECIMAL(10, 2)', 'ARRAY<STRING>'), a pyarrow type (pa.float64()) or a "
                    "pyarrow array class (pa.DoubleArray)" % (what, t))


def _signature(fn, name, params, returns):
    """The SQL types of fn's parameters and result: the explicit ones, else
    its annotations."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if params is None:
        if sig is None:
            raise TypeError("dipper: function %s: cannot read the parameters of %r; give "
                            "params=[...] (SQL types)" % (name, fn))
        params = []
        for p in sig.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError("dipper: function %s: parameter %s is not positional (*args, "
                                "keyword-only); a SQL function takes positional arguments "
                                "only: give params=[...]" % (name, p.name))
            if p.annotation is p.empty:
                raise TypeError("dipper: function %s: parameter %s has no type: annotate it "
                                "(x: pa.DoubleArray, or x: 'DOUBLE') or give params=[...]"
                                % (name, p.name))
            params.append(sql_type(p.annotation, "function %s, parameter %s" % (name, p.name)))
    else:
        if isinstance(params, (str, pa.DataType)):
            raise TypeError("dipper: function %s: params is a list of types, one per "
                            "parameter (params=[%r])" % (name, params))
        params = [sql_type(t, "function %s, parameter %d" % (name, i + 1))
                  for i, t in enumerate(params)]
    if returns is None:
        if sig is None or sig.return_annotation is sig.empty:
            raise TypeError("dipper: function %s has no result type: give returns='DOUBLE' "
                            "(a SQL type) or annotate its result (-> pa.DoubleArray)" % name)
        returns = sig.return_annotation
    return params, sql_type(returns, "function %s, the result" % name)


# The pyarrow type dipper hands out for a SQL type: what an argument of that
# type arrives as and what a result must be.  Asked of the library itself
# (a CAST(NULL AS T) on a handle of its own), so that every type — DECIMAL,
# TIMESTAMP(p), ROW, ARRAY, MAP, intervals — reads exactly as a query's column.
_probe = {"con": None, "types": {}}
_probe_lock = threading.Lock()


def arrow_type(sql):
    with _probe_lock:
        t = _probe["types"].get(sql)
        if t is not None:
            return t
        from .connection import Connection
        if _probe["con"] is None:
            _probe["con"] = Connection()
            _probe["con"].sql("SET 'execution.runtime-mode' = 'batch'")
        t = _probe["con"].sql("SELECT CAST(NULL AS %s) AS v" % sql).arrow().schema.field(0).type
        _probe["types"][sql] = t
        return t


# ---- what a function is ----

class Function:
    """A Python scalar function and its SQL signature, as @dipper.udf makes
    it: register it on a connection with con.create_function(f).  Calling
    it calls the Python function."""

    def __init__(self, fn, name=None, returns=None, params=None, deterministic=True):
        if not callable(fn):
            raise TypeError("dipper: a function needs a callable, not %r" % (fn,))
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None)
        if not self.name or self.name == "<lambda>":
            raise TypeError("dipper: a lambda has no name: give one "
                            "(con.create_function('name', fn, ...))")
        self.params, self.returns = _signature(fn, self.name, params, returns)
        self.deterministic = bool(deterministic)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kw):
        return self.fn(*args, **kw)

    def __repr__(self):
        return "<dipper.Function %s(%s) RETURNS %s>" % (self.name, ", ".join(self.params),
                                                        self.returns)


def udf(fn=None, *, returns=None, params=None, name=None, deterministic=True):
    """Make a Python function a SQL scalar function (dipper.Function):

        @dipper.udf(returns="DOUBLE")
        def fahrenheit(c: pa.DoubleArray):
            return pc.add(pc.multiply(c, 1.8), 32)

        con.create_function(fahrenheit)
        con.sql("SELECT fahrenheit(temp) FROM readings")

    It is called once per batch of rows with one pyarrow.Array per argument
    and returns one value per row.  `params` (SQL types) defaults to the
    parameters' annotations, `returns` to the result's; `deterministic`
    (the same arguments give the same result) lets a call of constants be
    computed once."""
    def make(f):
        return Function(f, name=name, returns=returns, params=params,
                        deterministic=deterministic)
    return make(fn) if fn is not None else make


# ---- the call from C ----

class _Registration:
    def __init__(self, con, func, arrow_ret):
        self.con_ref = weakref.ref(con)
        self.func = func
        self.arrow_ret = arrow_ret
        self.trampoline = None  # a scalar function's CFUNCTYPE, alive as long as this


class _BadResult(Exception):
    """What the function returned is not what it is declared to return."""


def _failed(reg, ctx, message, traceback=None):
    """Fail the call with `message` (the query's error says "function NAME:
    message"); a Python traceback is also kept for the exception's
    `traceback`."""
    lib.dipper_function_error(ctx, -1, message.encode("utf-8", "replace"))
    con = reg.con_ref() if reg else None
    if con is not None and traceback:
        con._udf_failures.append(traceback)
    return 1


def _argument(schema_addr, array_addr):
    s = _capi.ArrowSchema.from_address(schema_addr)
    if s.format == b"tiM":  # INTERVAL YEAR TO MONTH: int32 months, as in results
        s.release(schema_addr)
        return pa.Array._import_from_c(array_addr, pa.int32())
    # both are taken over (moved) by pyarrow: dipper releases what is left
    return pa.Array._import_from_c(array_addr, schema_addr)


def _result(reg, res, nargs, nrows):
    func, want = reg.func, reg.arrow_ret
    if isinstance(res, pa.ChunkedArray):
        res = res.combine_chunks()
    if not isinstance(res, pa.Array):
        if nargs == 0 and (res is None or isinstance(res, pa.Scalar) or
                           not hasattr(res, "__len__") or isinstance(res, (str, bytes))):
            res = pa.repeat(res if isinstance(res, pa.Scalar) else pa.scalar(res, want), nrows)
        else:
            try:
                res = pa.array(res, type=want)
            except (pa.ArrowException, TypeError, ValueError) as e:
                raise _BadResult("it returned a %s, which is not a %s array (%s): return a "
                                 "pyarrow.Array of %s, one value per row"
                                 % (type(res).__name__, want, e, func.returns))
    if res.type != want:
        raise _BadResult("it returned an array of %s but is declared to return %s (%s in "
                         "pyarrow): cast it (result.cast(%s)) or declare returns='%s'"
                         % (res.type, func.returns, want, _pa_name(want),
                            _sql_or(res.type)))
    if len(res) != nrows:
        raise _BadResult("it returned %d values for %d rows: return one value per row of "
                         "its arguments" % (len(res), nrows))
    return res


def _pa_name(t):
    """The pyarrow expression of type t, for a message."""
    T = pa.types
    if T.is_timestamp(t):
        return "pa.timestamp('%s'%s)" % (t.unit, ", tz='%s'" % t.tz if t.tz else "")
    if T.is_decimal(t):
        return "pa.decimal128(%d, %d)" % (t.precision, t.scale)
    if T.is_time64(t) or T.is_duration(t):
        return "pa.%s('%s')" % ("time64" if T.is_time64(t) else "duration", t.unit)
    simple = {"double": "float64", "float": "float32", "halffloat": "float16", "bool": "bool_",
              "date32[day]": "date32", "string": "string", "binary": "binary"}
    s = str(t)
    if s in simple or s.isidentifier():
        return "pa.%s()" % simple.get(s, s)
    return "the type %s" % t


def _sql_or(t):
    try:
        return _memory.sql_type(t)
    except TypeError:
        return str(t)


def _addresses(p, n):
    """The n pointers of the C array at address p, as ints."""
    return (ctypes.c_void_p * n).from_address(p) if n else ()


def _scalar_call(reg, ctx, nargs, schemas, args, nrows, out):
    """One call from the engine: reg's function on the batch's arrays."""
    try:
        arrays = [_argument(s, a) for s, a in zip(_addresses(schemas, nargs),
                                                  _addresses(args, nargs))]
        res = _result(reg, reg.func.fn(*arrays), nargs, nrows)
        res._export_to_c(out)
        return 0
    except _BadResult as e:
        return _failed(reg, ctx, str(e))
    except BaseException as e:
        # the traceback from the function's frame on (not this trampoline's)
        tb = "".join(_tb.format_exception(type(e), e, e.__traceback__.tb_next)).rstrip("\n")
        last = "".join(_tb.format_exception_only(type(e), e)).rstrip("\n")
        return _failed(reg, ctx, "%s\n%s" % (last, tb), tb)


def _scalar_trampoline(reg):
    """The C function of one registration: a CFUNCTYPE bound to it, so a
    call needs no look-up (no dipper_function_user); the registration keeps
    it alive until the handle's destroy."""
    def call(ctx, nargs, schemas, args, nrows, out):
        return _scalar_call(reg, ctx, nargs, schemas, args, nrows, out)
    return _capi.SCALAR_FN(call)


@_capi.FREE_FN
def _destroy_trampoline(user):
    try:
        _functions.pop(user, None)
    except Exception:  # at interpreter exit the registry may be gone already
        pass


def create(con, func):
    """Register `func` (a Function) on con's handle."""
    con._check_open()
    types = [t.encode() for t in func.params]
    argv = (ctypes.c_char_p * max(1, len(types)))(*types)
    token = next(_tokens)
    reg = _Registration(con, func, None)
    _functions[token] = reg  # before the call: the handle may call it from then on
    flags = _capi.FUNCTION_DETERMINISTIC if func.deterministic else 0
    reg.trampoline = _scalar_trampoline(reg)
    rc = lib.dipper_create_scalar_function(con._db, func.name.encode(), len(types), argv,
                                           func.returns.encode(), flags, reg.trampoline,
                                           token, _destroy_trampoline)
    if rc != _capi.OK:
        _functions.pop(token, None)  # on failure the handle did not take it
        con._check(rc)
    try:
        reg.arrow_ret = arrow_type(func.returns)
    except errors.Error as e:
        lib.dipper_drop_function(con._db, func.name.encode())  # its destroy pops the token
        raise TypeError("dipper: function %s: the result type %s has no Arrow form here: %s"
                        % (func.name, func.returns, e)) from None
    return func


# ---- aggregate functions (dipper_create_aggregate_function) ----
#
# The C API keeps a state of plain bytes per group (checkpoints save them
# as they are), so a Python aggregate declares its state as a few fixed-width
# fields (numbers, booleans), packed with `struct`: nothing in it refers to
# Python objects, and a restored checkpoint means the same.  update is
# called once per group of each batch, with that group's rows as pyarrow
# arrays (slices of the batch's, sorted by group); combine and finalize per
# state.

_STATE_CODES = {"BOOLEAN": "?", "TINYINT": "b", "SMALLINT": "h", "INT": "i", "INTEGER": "i",
                "BIGINT": "q", "FLOAT": "f", "REAL": "f", "DOUBLE": "d"}
_PTR = ctypes.sizeof(ctypes.c_void_p)


class _State:
    """The layout of an aggregate's state: named fixed-width fields, or one
    unnamed field (the Python side then sees a bare value)."""

    def __init__(self, name, state, initial):
        if isinstance(state, str):
            self.names, types = None, [state]
        else:
            items = list(state.items()) if isinstance(state, dict) else list(state or [])
            if not items or not all(isinstance(i, (tuple, list)) and len(i) == 2 for i in items):
                raise TypeError("dipper: aggregate %s: state is a SQL type ('DOUBLE') or a dict "
                                "of field -> type ({'total': 'DOUBLE', 'n': 'BIGINT'})" % name)
            self.names, types = [str(k) for k, _ in items], [t for _, t in items]
        codes = []
        for t in types:
            code = _STATE_CODES.get(sql_type(t, "aggregate %s, state" % name).upper())
            if code is None:
                raise TypeError("dipper: aggregate %s: a state field of %s: the state is plain "
                                "bytes that checkpoints keep, so its fields are BOOLEAN, "
                                "TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE" % (name, t))
            codes.append(code)
        self.struct = struct.Struct("=" + "".join(codes))
        self.size = self.struct.size
        zero = [False if c == "?" else 0.0 if c in "fd" else 0 for c in codes]
        try:
            self.initial = self.pack(self.unpack(self.struct.pack(*zero)) if initial is None
                                     else initial, "initial")
        except _BadResult as e:
            raise TypeError("dipper: aggregate %s: %s" % (name, e)) from None

    def unpack(self, raw):
        vals = self.struct.unpack(raw)
        return vals[0] if self.names is None else dict(zip(self.names, vals))

    def pack(self, value, what):
        try:
            if self.names is None:
                return self.struct.pack(value)
            if not isinstance(value, dict) or set(value) != set(self.names):
                raise _BadResult("%s gave %r: the state is a dict of %s" % (
                    what, value, ", ".join(self.names)))
            return self.struct.pack(*(value[n] for n in self.names))
        except _BadResult:
            raise
        except Exception as e:  # struct.error, TypeError: a None or a str in a number field
            raise _BadResult("%s gave %r, which does not fit the state (%s): %s" % (
                what, value, self._text(), e)) from None

    def _text(self):
        return ", ".join(self.names) if self.names else "one value"


class Aggregate:
    """A Python aggregate function: update(state, *arrays) -> state for the
    rows of one group in a batch, combine(a, b) -> state, finalize(state)
    -> value; the state is `state`'s fields (see udaf).  Register it with
    con.create_function(agg)."""

    def __init__(self, name, update, combine, finalize, state, returns, params=None,
                 initial=None, deterministic=True):
        for what, f in (("update", update), ("combine", combine), ("finalize", finalize)):
            if not callable(f):
                raise TypeError("dipper: aggregate %s needs %s, a callable" % (name, what))
        self.name, self.update, self.combine, self.finalize = name, update, combine, finalize
        self.deterministic = bool(deterministic)
        if params is None:
            params = _update_params(name, update)
        else:
            params = [sql_type(t, "aggregate %s, parameter %d" % (name, i + 1))
                      for i, t in enumerate(params)]
        if not 1 <= len(params) <= 2:
            raise TypeError("dipper: aggregate %s takes %d arguments: a Python aggregate takes "
                            "1 or 2 (pack more into a ROW)" % (name, len(params)))
        self.params = params
        self.returns = sql_type(returns, "aggregate %s, the result" % name)
        self.state = _State(name, state, initial)

    def __repr__(self):
        return "<dipper.Aggregate %s(%s) RETURNS %s>" % (self.name, ", ".join(self.params),
                                                         self.returns)


def _update_params(name, update):
    try:
        ps = list(inspect.signature(update).parameters.values())
    except (TypeError, ValueError):
        ps = None
    if not ps:
        raise TypeError("dipper: aggregate %s: give params=[...] (SQL types)" % name)
    ps = ps[1:]  # update(state, x, ...)
    for p in ps:
        if p.annotation is p.empty:
            raise TypeError("dipper: aggregate %s: parameter %s of update has no type: annotate "
                            "it (x: pa.DoubleArray) or give params=[...]" % (name, p.name))
    return [sql_type(p.annotation, "aggregate %s, parameter %s" % (name, p.name)) for p in ps]


def udaf(cls=None, *, returns, state, params=None, name=None, initial=None, deterministic=True):
    """Make a class a SQL aggregate function (dipper.Aggregate):

        @dipper.udaf(returns="DOUBLE", state={"total": "DOUBLE", "n": "BIGINT"})
        class mean:
            def update(self, state, x: pa.DoubleArray):   # one group's rows of a batch
                return {"total": state["total"] + (pc.sum(x).as_py() or 0),
                        "n": state["n"] + pc.count(x).as_py()}
            def combine(self, a, b):
                return {"total": a["total"] + b["total"], "n": a["n"] + b["n"]}
            def finalize(self, state):
                return state["total"] / state["n"] if state["n"] else None

    The class is instantiated once (with no arguments); per-group data lives
    in the state only.  `initial` (or a class attribute of that name) is the
    state of a new group (zeros by default)."""
    def make(c):
        obj = c()
        init = initial if initial is not None else getattr(obj, "initial", None)
        return Aggregate(name or c.__name__, obj.update, obj.combine, obj.finalize, state,
                         returns, params=params, initial=init, deterministic=deterministic)
    return make(cls) if cls is not None else make


def _agg(ctx):
    return _functions.get(lib.dipper_function_user(ctx))


def _groups(states_addr, nrows):
    """The distinct states of an update (addresses) and, per state, the rows
    of the batch it gets: (addresses, order, counts); order None when the
    rows need no reordering (one state)."""
    ptrs = pa.Array.from_buffers(pa.uint64() if _PTR == 8 else pa.uint32(), nrows,
                                 [None, pa.foreign_buffer(states_addr, nrows * _PTR)])
    first = ptrs[0].as_py()
    if nrows == 1 or (pc.min(ptrs).as_py() == first and pc.max(ptrs).as_py() == first):
        return [first], None, [nrows]
    enc = ptrs.dictionary_encode()
    addrs = enc.dictionary.to_pylist()
    counts = [0] * len(addrs)
    vc = pc.value_counts(enc.indices)
    for v, c in zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()):
        counts[v] = c
    return addrs, pc.sort_indices(enc.indices), counts  # a stable sort


def _agg_error(reg, ctx, e):
    if isinstance(e, _BadResult):
        return _failed(reg, ctx, str(e))
    tb = "".join(_tb.format_exception(type(e), e, e.__traceback__.tb_next)).rstrip("\n")
    last = "".join(_tb.format_exception_only(type(e), e)).rstrip("\n")
    return _failed(reg, ctx, "%s\n%s" % (last, tb), tb)


@_capi.AGG_INIT_FN
def _agg_init(user, state):
    reg = _functions.get(user)
    if reg is not None:
        ctypes.memmove(state, reg.func.state.initial, reg.func.state.size)


@_capi.AGG_UPDATE_FN
def _agg_update(ctx, nargs, schemas, args, nrows, states):
    reg = None
    try:
        reg = _agg(ctx)
        arrays = [_argument(schemas[i], args[i]) for i in range(nargs)]
        agg, st = reg.func, reg.func.state
        addrs, order, counts = _groups(states, nrows)
        if order is not None:
            arrays = [a.take(order) for a in arrays]
        off = 0
        for addr, n in zip(addrs, counts):
            part = arrays if order is None else [a.slice(off, n) for a in arrays]
            off += n
            new = agg.update(st.unpack(ctypes.string_at(addr, st.size)), *part)
            ctypes.memmove(addr, st.pack(new, "update"), st.size)
        return 0
    except BaseException as e:
        return _agg_error(reg, ctx, e)


@_capi.AGG_COMBINE_FN
def _agg_combine(ctx, src, dst):
    reg = None
    try:
        reg = _agg(ctx)
        st = reg.func.state
        new = reg.func.combine(st.unpack(ctypes.string_at(dst, st.size)),
                               st.unpack(ctypes.string_at(src, st.size)))
        ctypes.memmove(dst, st.pack(new, "combine"), st.size)
        return 0
    except BaseException as e:
        return _agg_error(reg, ctx, e)


@_capi.AGG_FINALIZE_FN
def _agg_finalize(ctx, n, states, out):
    reg = None
    try:
        reg = _agg(ctx)
        st = reg.func.state
        addrs = (ctypes.c_void_p * n).from_address(states) if n else []
        vals = []
        for addr in addrs:
            v = reg.func.finalize(st.unpack(ctypes.string_at(addr, st.size)))
            vals.append(v.as_py() if isinstance(v, pa.Scalar) else v)
        try:
            res = pa.array(vals, type=reg.arrow_ret)
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise _BadResult("finalize gave %r, which is not a %s (%s)"
                             % (vals[:3], reg.func.returns, e)) from None
        res._export_to_c(ctypes.cast(out, ctypes.c_void_p).value)
        return 0
    except BaseException as e:
        return _agg_error(reg, ctx, e)


def create_aggregate(con, agg):
    """Register `agg` (an Aggregate) on con's handle."""
    con._check_open()
    types = [t.encode() for t in agg.params]
    argv = (ctypes.c_char_p * len(types))(*types)
    fns = _capi.AggregateFns(ctypes.sizeof(_capi.AggregateFns), agg.state.size, _agg_init,
                             _agg_update, _agg_combine, _agg_finalize)  # copied by the call
    token = next(_tokens)
    reg = _Registration(con, agg, None)
    _functions[token] = reg
    flags = _capi.FUNCTION_DETERMINISTIC if agg.deterministic else 0
    rc = lib.dipper_create_aggregate_function(con._db, agg.name.encode(), len(types), argv,
                                              agg.returns.encode(), flags, ctypes.byref(fns),
                                              token, _destroy_trampoline)
    if rc != _capi.OK:
        _functions.pop(token, None)
        con._check(rc)
    try:
        reg.arrow_ret = arrow_type(agg.returns)
    except errors.Error as e:
        lib.dipper_drop_function(con._db, agg.name.encode())
        raise TypeError("dipper: aggregate %s: the result type %s has no Arrow form here: %s"
                        % (agg.name, agg.returns, e)) from None
    return agg
