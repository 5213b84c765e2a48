"""The C API of libdipper (include/dipper.h), declared for ctypes.

Owns: finding and loading the shared library, the ctypes mirror of every
public struct the package uses, and the argument/result types of every
dipper_* function it calls.  Nothing else of the package calls the library
except through `lib` here.

Why ctypes (not cffi): the package needs no C compiler of its own at install
time and no generated module; ctypes.CDLL releases the GIL around every
foreign call and CFUNCTYPE callbacks take it back, which is exactly the
threading contract issue 14 asks for.  See docs/python.md.

The library is found, in order: $DIPPER_LIBRARY (a path, used by the tests
to aim at a build tree's library), the libdipper.so.0 installed beside this
file by `pip install`, then the system's (ctypes.util.find_library).
"""

import ctypes
import ctypes.util
import os

c_int, c_int64, c_size_t, c_char_p, c_void_p, c_uint, c_double = (
    ctypes.c_int, ctypes.c_int64, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p,
    ctypes.c_uint, ctypes.c_double)
POINTER = ctypes.POINTER

# The result codes, in the order of DIPPER_CODES (never renumbered).
CODES = ("OK", "NOMEM", "MISUSE", "IO", "SYNTAX", "NAME", "TYPE", "STREAMING",
         "UNSUPPORTED", "OPTION", "DUPLICATE", "INTERNAL", "LIMIT", "CONNECT",
         "PROTOCOL", "REMOTE", "DATA", "TIMEOUT", "INTERRUPTED", "CORRUPT")
OK = 0
INTERRUPTED = CODES.index("INTERRUPTED")

EXPLAIN_NO_SCHEMA, EXPLAIN_NO_STREAMING, EXPLAIN_JSON = 1, 2, 4
STMT_SESSION, STMT_QUERY, STMT_INSERT, STMT_RESULT = 1, 2, 3, 4
EVENT_PROGRESS, EVENT_IDLE, EVENT_TERMINATED = 1, 2, 3
RECENT_PROGRESS = 32
SIZE_AUTO = ctypes.c_size_t(-1).value  # (size_t)-1: a NUL-terminated string


class Diag(ctypes.Structure):
    _fields_ = [("code", c_int), ("message", c_char_p), ("file", c_char_p),
                ("line", c_int), ("col", c_int), ("length", c_int)]


class Progress(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("name", c_char_p), ("batch_id", c_int64),
                ("input_rows", c_int64), ("output_rows", c_int64),
                ("input_rows_per_sec", c_double), ("output_rows_per_sec", c_double),
                ("batch_duration_us", c_int64), ("watermark", c_int64),
                ("state_rows", c_int64), ("late_rows_dropped", c_int64),
                ("bad_records_skipped", c_int64), ("total_input_rows", c_int64),
                ("total_output_rows", c_int64), ("finished", c_int),
                ("checkpoint_bytes", c_int64), ("checkpoint_us", c_int64)]


class Status(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("active", c_int), ("data_available", c_int),
                ("trigger_active", c_int), ("message", ctypes.c_char * 128)]


class Event(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("kind", c_int), ("query", c_void_p),
                ("name", c_char_p), ("id", c_char_p), ("run_id", c_char_p),
                ("progress", POINTER(Progress)), ("error", c_char_p), ("json", c_char_p)]


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [("get_schema", c_void_p), ("get_next", c_void_p),
                ("get_last_error", c_void_p),
                ("release", ctypes.CFUNCTYPE(None, c_void_p)), ("private_data", c_void_p)]


class ArrowSchema(ctypes.Structure):
    _fields_ = [("format", c_char_p), ("name", c_char_p), ("metadata", c_char_p),
                ("flags", c_int64), ("n_children", c_int64), ("children", c_void_p),
                ("dictionary", c_void_p), ("release", ctypes.CFUNCTYPE(None, c_void_p)),
                ("private_data", c_void_p)]


class ArrowArray(ctypes.Structure):
    _fields_ = [("length", c_int64), ("null_count", c_int64), ("offset", c_int64),
                ("n_buffers", c_int64), ("n_children", c_int64), ("buffers", c_void_p),
                ("children", c_void_p), ("dictionary", c_void_p),
                ("release", ctypes.CFUNCTYPE(None, c_void_p)), ("private_data", c_void_p)]


# Callback types.  CFUNCTYPE callbacks take the GIL when C calls them, from
# whatever thread that is.
PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(Progress))
EVENT_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(Event))
BATCH_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int64, POINTER(ArrowSchema), POINTER(ArrowArray))
FREE_FN = ctypes.CFUNCTYPE(None, c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)
# dipper_scalar_fn: (ctx, nargs, schemas[nargs], args[nargs], nrows, out), every
# pointer as a plain address (udf.py reads the two arrays of pointers): ctypes
# then makes no pointer objects per call.
SCALAR_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_void_p, c_void_p, c_int64, c_void_p)
FUNCTION_DETERMINISTIC = 1
AGG_INIT_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
AGG_UPDATE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, POINTER(c_void_p), POINTER(c_void_p),
                                 c_int64, c_void_p)
AGG_COMBINE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
AGG_FINALIZE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int64, c_void_p, POINTER(ArrowArray))


class AggregateFns(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("state_size", c_size_t), ("init", AGG_INIT_FN),
                ("update", AGG_UPDATE_FN), ("combine", AGG_COMBINE_FN),
                ("finalize", AGG_FINALIZE_FN)]

_SIGNATURES = {
    "dipper_version": (c_char_p, []),
    "dipper_strerror": (c_char_p, [c_int]),
    "dipper_open": (c_int, [POINTER(c_void_p), c_char_p]),
    "dipper_close": (None, [c_void_p]),
    "dipper_compile": (c_int, [c_void_p, c_char_p, c_size_t, c_char_p, POINTER(c_void_p)]),
    "dipper_program_free": (None, [c_void_p]),
    "dipper_program_count": (c_int, [c_void_p]),
    "dipper_program_streaming": (c_int, [c_void_p]),
    "dipper_program_stmt_kind": (c_int, [c_void_p, c_int, POINTER(c_int)]),
    "dipper_explain": (c_int, [c_void_p, c_uint, POINTER(c_void_p)]),
    "dipper_free": (None, [c_void_p]),
    "dipper_diag_count": (c_int, [c_void_p]),
    "dipper_diag_get": (POINTER(Diag), [c_void_p, c_int]),
    "dipper_errmsg": (c_char_p, [c_void_p]),
    "dipper_diag_render": (c_void_p, [c_void_p, c_int]),
    "dipper_program_warning_count": (c_int, [c_void_p]),
    "dipper_program_warning": (POINTER(Diag), [c_void_p, c_int]),
    "dipper_program_warning_render": (c_void_p, [c_void_p, c_int]),
    "dipper_query_start": (c_int, [c_void_p, POINTER(POINTER(c_void_p)), POINTER(c_int)]),
    "dipper_query_step": (c_int, [c_void_p, POINTER(c_int)]),
    "dipper_query_progress": (c_int, [c_void_p, POINTER(Progress)]),
    "dipper_query_free_all": (None, [POINTER(c_void_p), c_int]),
    "dipper_run": (c_int, [c_void_p, PROGRESS_FN, c_void_p]),
    "dipper_execute": (c_int, [c_void_p, c_int, POINTER(ArrowArrayStream)]),
    "dipper_interrupt": (None, [c_void_p]),
    "dipper_set_log": (None, [c_void_p, LOG_FN, c_void_p]),
    "dipper_query_status": (c_int, [c_void_p, POINTER(Status)]),
    "dipper_query_await": (c_int, [c_void_p, c_int64, POINTER(c_int)]),
    "dipper_query_stop": (c_int, [c_void_p]),
    "dipper_query_recent_progress": (c_int, [c_void_p, POINTER(Progress), c_int, POINTER(c_int)]),
    "dipper_query_name": (c_char_p, [c_void_p]),
    "dipper_query_id": (c_char_p, [c_void_p]),
    "dipper_query_run_id": (c_char_p, [c_void_p]),
    "dipper_active_queries": (c_int, [c_void_p, POINTER(c_void_p), c_int, POINTER(c_int)]),
    "dipper_listen": (c_int, [c_void_p, EVENT_FN, c_void_p, c_int64]),
    "dipper_register_callback2": (c_int, [c_void_p, c_char_p, BATCH_FN, c_void_p, FREE_FN]),
    "dipper_unregister_callback": (c_int, [c_void_p, c_char_p]),
    "dipper_function_user": (c_void_p, [c_void_p]),
    "dipper_function_error": (c_int, [c_void_p, c_int64, c_char_p]),
    "dipper_create_scalar_function": (c_int, [c_void_p, c_char_p, c_int, POINTER(c_char_p),
                                              c_char_p, c_uint, SCALAR_FN, c_void_p, FREE_FN]),
    "dipper_create_aggregate_function": (c_int, [c_void_p, c_char_p, c_int, POINTER(c_char_p),
                                                 c_char_p, c_uint, POINTER(AggregateFns),
                                                 c_void_p, FREE_FN]),
    "dipper_drop_function": (c_int, [c_void_p, c_char_p]),
    "dipper_memory_push_json": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t]),
    "dipper_memory_fetch": (c_int, [c_void_p, c_char_p, POINTER(ArrowSchema),
                                    POINTER(ArrowArray)]),
}


def _find():
    env = os.environ.get("DIPPER_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libdipper.so.0", "libdipper.so", "libdipper.dylib"):
        path = os.path.join(here, name)
        if os.path.exists(path):
            return path
    found = ctypes.util.find_library("dipper")
    if found:
        return found
    raise ImportError("dipper: libdipper not found: not beside the package, not on the "
                      "system, and $DIPPER_LIBRARY is not set; install with "
                      "`pip install ./python` from the dipper repository")


def _load():
    path = _find()
    # CDLL (not PyDLL): every call releases the GIL while C runs.
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib, path


lib, library_path = _load()


def text(b):
    """A C string (bytes or None) as str."""
    return None if b is None else b.decode("utf-8", "replace")
