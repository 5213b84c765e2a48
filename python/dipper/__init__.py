"""dipper for Python: the streaming query engine over its C API.

    import dipper
    con = dipper.connect()                 # embedded; or dipper.connect("sc://host:15002")
    con.sql("SELECT 1 AS x").arrow()       # a pyarrow.Table, no copy

    @dipper.udf(returns="DOUBLE")          # a Python scalar function, vectorized
    def half(x: pa.Int64Array): ...
    con.create_function(half)

See docs/python.md.
"""

from . import errors as _errors
from ._capi import library_path, lib as _lib
from .connection import Connection, Program, Result, connect
from .errors import CompileWarning, Diagnostic, Error
from .streaming import Progress, Query, QueryEvent, Status
from .udf import Aggregate, Function, udaf, udf

__version__ = _lib.dipper_version().decode()

# dipper.SyntaxError, dipper.NameError, ... : one class per DIPPER_* code.
for _cls in _errors.by_code.values():
    globals()[_cls.__name__] = _cls
del _cls

__all__ = ["connect", "Connection", "Result", "Program", "Query", "QueryEvent", "Progress",
           "Status", "Function", "udf", "Aggregate", "udaf", "Error", "Diagnostic", "CompileWarning",
           "library_path"] + \
          [c.__name__ for c in _errors.by_code.values()]
