"""Ibis's Python UDFs on dipper: `@ibis.udf.scalar.pyarrow`, `.python`
and `.pandas` registered as dipper Python functions (dipper.udf:
con.create_function, vectorized over pyarrow arrays).

Owns: the dipper function that stands for one Ibis ScalarUDF node — its
name (the node's class name, which Ibis's compiler writes in the SQL, so a
redefinition is a new function), its SQL signature (the node's Ibis types
through types.py) and the Python callable dipper calls once per batch:

- pyarrow: the user's function itself (it takes pyarrow arrays and gives
  one back, dipper's own calling convention);
- python: called once per row with Python values (None for NULL, as
  PySpark's row UDFs get it), the results made one array of the result type;
- pandas: called with one pandas Series per argument, its Series made an
  array.

Builtin UDFs (`@ibis.udf.scalar.builtin`) name functions dipper already has
and need nothing.  The backend registers the UDFs of an expression before
it compiles it (Ibis's `_register_udfs` pre-execute hook), as DuckDB's and
PySpark's backends do; a query that calls one on a Spark connection is
refused by the library at compile time (Spark cannot call into this
process).
"""

import ibis.common.exceptions as com
import ibis.expr.operations as ops
import pyarrow as pa
from ibis.expr.operations.udf import InputType

from . import types as _types


def sql_name(node):
    """The name Ibis's compiler gives the UDF in SQL (a redefinition of the
    same Python function is a new class, hence a new name)."""
    return type(node).__name__


def _signature(node):
    params = [_types.base_sql(p.annotation.pattern.dtype)
              for p in node.__signature__.parameters.values()]
    return params, _types.base_sql(node.dtype)


def _row_wise(fn, name, ret):
    """A vectorized form of a row-at-a-time Python function."""
    def call(*arrays):
        columns = [a.to_pylist() for a in arrays]
        out = [fn(*row) for row in zip(*columns)]
        return pa.array(out, type=ret)
    call.__name__ = name
    return call


def _pandas_wise(fn, name, ret):
    """A vectorized form of a function of pandas Series."""
    def call(*arrays):
        import pandas as pd
        out = fn(*(a.to_pandas() for a in arrays))
        if isinstance(out, pd.Series):
            return pa.Array.from_pandas(out, type=ret)
        return pa.array(out, type=ret)
    call.__name__ = name
    return call


def callable_of(node, params, returns):
    """The function dipper calls for the UDF node: (fn, deterministic)."""
    kind = node.__input_type__
    fn = node.__func__
    name = sql_name(node)
    config = dict(node.__config__)
    deterministic = not config.pop("volatile", False)
    deterministic = bool(config.pop("deterministic", deterministic))
    if config:
        raise com.UnsupportedArgumentError(
            "dipper: the UDF %s has options dipper does not take: %s (it takes "
            "deterministic=False or volatile=True)" % (node.__func_name__, ", ".join(config)))
    if kind == InputType.PYARROW:
        return fn, deterministic
    if not params:
        raise com.UnsupportedOperationError(
            "dipper: the %s UDF %s takes no arguments: dipper calls a Python function once "
            "per batch of rows, so it would be called once per batch, not per row; write it "
            "as @ibis.udf.scalar.pyarrow with a parameter" % (kind.name.lower(),
                                                               node.__func_name__))
    from dipper.udf import arrow_type
    ret = arrow_type(returns)
    if kind == InputType.PYTHON:
        return _row_wise(fn, name, ret), deterministic
    if kind == InputType.PANDAS:
        return _pandas_wise(fn, name, ret), deterministic
    raise com.UnsupportedOperationError("dipper: UDFs of the kind %s are not supported" % kind)


def register(backend, expr):
    """Register on backend.con every Python ScalarUDF of `expr` (builtin
    ones name dipper's own functions and need nothing), once per connection
    (each Ibis definition has a name of its own)."""
    for node in expr.op().find(ops.ScalarUDF):
        if node.__input_type__ == InputType.BUILTIN or sql_name(node) in backend._udf_names:
            continue
        ns = node.__udf_namespace__
        if ns.database is not None or ns.catalog is not None:
            raise com.UnsupportedArgumentError(
                "dipper: the Python UDF %s names a database or catalog; dipper's Python "
                "functions belong to the connection: leave database= and catalog= out"
                % node.__func_name__)
        params, returns = _signature(node)
        fn, deterministic = callable_of(node, params, returns)
        backend.con.create_function(sql_name(node), fn, returns=returns, params=params,
                                    deterministic=deterministic)
        backend._udf_names.add(sql_name(node))
