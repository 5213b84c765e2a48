"""Streaming from Python: query handles, progress, status and the listener bus.

Owns: dipper.Query (one dipper_query of a started program: name, ids,
status, progress, await, stop), the typed Progress / Status / QueryEvent
objects copied out of dipper's structs (their size fields honoured: a field
the library did not fill keeps its default), and con.listen()'s iterator
over dipper_listen's events.

Lifetimes: the queries of one dipper_query_start are freed together
(dipper_query_free_all, which stops them) when the last handle of the group
goes or the connection closes; the group keeps its program alive, which
must outlive the queries.

listen() runs dipper_listen on a worker thread and hands each event over
to the iterating thread one at a time: the C callback waits until the
consumer asks for the next, so an event's borrowed data is copied while C
waits, and leaving the loop makes the callback return non-zero, which ends
dipper_listen without an interrupt.  Ctrl-C while waiting interrupts the
call and stops the connection's queries.
"""

import ctypes
import datetime
import queue
import threading
from dataclasses import asdict, dataclass, fields
from typing import List, Optional

from . import _capi
from ._capi import lib

_INT64_MIN = -(1 << 63)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _present(struct, name, filled):
    f = getattr(type(struct), name)
    return f.offset + f.size <= filled


@dataclass(frozen=True)
class Progress:
    """One micro-batch's report (Spark's StreamingQueryProgress).  Times in
    µs; `watermark` is a UTC datetime (None before the first), and
    `watermark_us` the same in µs since the epoch."""
    name: Optional[str] = None
    batch_id: int = -1
    input_rows: int = 0
    output_rows: int = 0
    input_rows_per_sec: float = 0.0
    output_rows_per_sec: float = 0.0
    batch_duration_us: int = 0
    watermark_us: Optional[int] = None
    state_rows: int = 0
    late_rows_dropped: int = 0
    bad_records_skipped: int = 0
    total_input_rows: int = 0
    total_output_rows: int = 0
    finished: bool = False
    checkpoint_bytes: int = 0
    checkpoint_us: int = 0

    @property
    def watermark(self):
        if self.watermark_us is None:
            return None
        return _EPOCH + datetime.timedelta(microseconds=self.watermark_us)

    @property
    def processed_rows_per_sec(self):  # PySpark's name
        return self.output_rows_per_sec

    def as_dict(self):
        return asdict(self)

    @classmethod
    def _of(cls, p):
        kw = {}
        filled = p.size
        for f in fields(cls):
            cname = "watermark" if f.name == "watermark_us" else f.name
            if not _present(p, cname, filled):
                continue
            v = getattr(p, cname)
            if cname == "name":
                v = _capi.text(v)
            elif cname == "watermark":
                v = None if v == _INT64_MIN else v
            elif cname == "finished":
                v = bool(v)
            kw[f.name] = v
        return cls(**kw)


@dataclass(frozen=True)
class Status:
    """What a query does now (Spark's StreamingQueryStatus)."""
    active: bool
    data_available: bool
    trigger_active: bool
    message: str

    def as_dict(self):  # PySpark's keys
        return {"message": self.message, "isDataAvailable": self.data_available,
                "isTriggerActive": self.trigger_active}


@dataclass(frozen=True)
class QueryEvent:
    """One event of the listener bus: kind is "progress", "idle" or
    "terminated"; `query` the handle it is about (None for a Spark query
    that is not one of this connection's); `progress` for "progress";
    `error` for a query that failed (with the Python traceback when a
    callback of this package failed it); `json` the server's text on Spark."""
    kind: str
    query: Optional["Query"]
    name: Optional[str]
    id: Optional[str]
    run_id: Optional[str]
    progress: Optional[Progress]
    error: Optional[str]
    json: Optional[str]


_EVENT_KINDS = {_capi.EVENT_PROGRESS: "progress", _capi.EVENT_IDLE: "idle",
                _capi.EVENT_TERMINATED: "terminated"}


def _event_of(con, e):
    filled = e.size

    def get(name):
        return getattr(e, name) if _present(e, name, filled) else None
    prog = get("progress")
    error = _capi.text(get("error"))
    if e.kind == _capi.EVENT_TERMINATED and con._callback_failures:
        tb = "\n".join(con._callback_failures)
        con._callback_failures.clear()
        error = (error or "the query failed") + "\nthe Python callback raised:\n" + tb
    if e.kind == _capi.EVENT_TERMINATED:
        con._udf_failures.clear()  # a Python UDF's traceback is in `error` already
    qptr = get("query")
    return QueryEvent(_EVENT_KINDS.get(e.kind, str(e.kind)),
                      con._queries.get(qptr) if qptr else None,
                      _capi.text(get("name")), _capi.text(get("id")), _capi.text(get("run_id")),
                      Progress._of(prog.contents) if prog else None, error,
                      _capi.text(get("json")))


class _QueryGroup:
    """The queries of one dipper_query_start, freed together."""

    def __init__(self, con, program, arr, n):
        self.con = con
        self.program = program
        self.arr = arr
        self.n = n

    def pointers(self):
        return [self.arr[i] for i in range(self.n)] if self.arr else []

    def stop_all(self):
        for p in self.pointers():
            lib.dipper_query_stop(p)

    def free(self):
        if self.arr:
            arr, self.arr = self.arr, None
            lib.dipper_query_free_all(arr, self.n)
        self.program.free()

    def __del__(self):
        try:
            if self.arr and self.con._db:
                self.free()
        except Exception:  # at interpreter exit the module may be gone already
            pass


class Query:
    """A running streaming query (PySpark's StreamingQuery)."""

    def __init__(self, group, ptr):
        self._group = group
        self._ptr = ptr

    @property
    def _con(self):
        return self._group.con

    def _live(self):
        self._con._check_open()
        if not self._group.arr:
            raise _misuse("dipper: the query was freed")
        return self._ptr

    @property
    def name(self):
        """The sink table's name, or "select#N" for a bare SELECT."""
        return _capi.text(lib.dipper_query_name(self._live()))

    @property
    def id(self):
        """Spark: the query's id (a UUID); None on the embedded engine."""
        return _capi.text(lib.dipper_query_id(self._live()))

    @property
    def run_id(self):
        return _capi.text(lib.dipper_query_run_id(self._live()))

    @property
    def status(self):
        s = _capi.Status()
        s.size = ctypes.sizeof(s)
        self._con._check(lib.dipper_query_status(self._live(), ctypes.byref(s)))
        return Status(bool(s.active), bool(s.data_available), bool(s.trigger_active),
                      s.message.decode("utf-8", "replace"))

    @property
    def is_active(self):
        return self.status.active

    isActive = is_active

    @property
    def last_progress(self):
        """The last micro-batch's Progress, None before the first."""
        p = _capi.Progress()
        p.size = ctypes.sizeof(p)
        self._con._check(lib.dipper_query_progress(self._live(), ctypes.byref(p)))
        return None if p.batch_id < 0 else Progress._of(p)

    lastProgress = last_progress

    @property
    def recent_progress(self) -> List[Progress]:
        """The most recent reports, oldest first (up to 32)."""
        arr = (_capi.Progress * _capi.RECENT_PROGRESS)()
        arr[0].size = ctypes.sizeof(_capi.Progress)
        n = ctypes.c_int()
        self._con._check(lib.dipper_query_recent_progress(self._live(), arr,
                                                          _capi.RECENT_PROGRESS,
                                                          ctypes.byref(n)))
        return [Progress._of(arr[i]) for i in range(n.value)]

    recentProgress = recent_progress

    def step(self):
        """Run one micro-batch now if there is something to do; True once
        the query has ended."""
        finished = ctypes.c_int()
        rc = self._con._blocking(lib.dipper_query_step, self._live(), ctypes.byref(finished))
        self._con._check(rc)
        return bool(finished.value)

    def await_termination(self, timeout=None):
        """Wait until the query ends, at most `timeout` seconds (None: no
        limit); on the embedded engine it runs by its trigger meanwhile.
        True when it has ended; raises the query's error if it failed."""
        ms = -1 if timeout is None else max(0, int(timeout * 1000))
        term = ctypes.c_int()
        rc = self._con._blocking(lib.dipper_query_await, self._live(), ms, ctypes.byref(term))
        self._con._check(rc)
        return bool(term.value)

    awaitTermination = await_termination

    def process_all_available(self):
        """Run micro-batches until one finds nothing to do (embedded), as
        PySpark's processAllAvailable."""
        while True:
            before = self.last_progress
            if self.step():
                return
            after = self.last_progress
            if (before is None and after is None) or \
               (before is not None and after is not None and before.batch_id == after.batch_id):
                return

    processAllAvailable = process_all_available

    def stop(self):
        """Stop the query (its last progress is taken in first)."""
        self._con._check(lib.dipper_query_stop(self._live()))

    def __repr__(self):
        try:
            return "<dipper.Query %s %s>" % (self.name, self.status.message)
        except Exception:
            return "<dipper.Query (freed)>"


def _misuse(msg):
    from .errors import by_code
    return by_code[2](msg)


def start(con, program):
    arr = ctypes.POINTER(ctypes.c_void_p)()
    n = ctypes.c_int()
    rc = lib.dipper_query_start(program.ptr, ctypes.byref(arr), ctypes.byref(n))
    con._check(rc)
    group = _QueryGroup(con, program, arr, n.value)
    con._groups.add(group)
    queries = []
    for p in group.pointers():
        q = Query(group, p)
        con._queries[p] = q
        queries.append(q)
    return queries


def listen(con, timeout=None):
    con._check_open()
    events = queue.Queue()
    replies = queue.Queue()
    closed = threading.Event()

    def on_event(user, evp):
        if closed.is_set():
            return 1
        try:
            ev = _event_of(con, evp.contents)
        except BaseException as e:
            events.put(("exc", e))
            return 1
        events.put(("event", ev))
        return 0 if replies.get() == "go" else 1

    fn = _capi.EVENT_FN(on_event)
    ms = -1 if timeout is None else max(0, int(timeout * 1000))
    box = {}

    def work():
        try:
            box["rc"] = lib.dipper_listen(con._db, fn, None, ms)
        finally:
            events.put(("done", None))

    worker = threading.Thread(target=work, name="dipper-listen", daemon=True)
    worker.start()

    def finish():  # the worker is stopping: let it return
        closed.set()
        replies.put("stop")
        while True:
            try:
                kind, _ = events.get()
            except KeyboardInterrupt:
                continue
            if kind == "done":
                break
        worker.join()

    error = None
    try:
        while True:
            kind, ev = events.get()
            if kind == "done":
                worker.join()
                break
            if kind == "exc":
                error = ev
                continue
            yield ev
            replies.put("go")
    except KeyboardInterrupt:
        lib.dipper_interrupt(con._db)
        finish()
        con._stop_running()
        raise
    except GeneratorExit:
        finish()
        return
    if error is not None:
        raise error
    rc = box.get("rc", _capi.OK)
    if rc == _capi.INTERRUPTED:
        raise KeyboardInterrupt
    con._check(rc)
