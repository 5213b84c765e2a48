"""CUMULATE and SESSION window aggregations for Ibis.

Ibis's `Table.window_by(col)` has `.tumble(size=)` and `.hop(size=, slide=)`
(Flink's TUMBLE and HOP).  dipper also runs Flink's CUMULATE and SESSION
window functions; importing the backend (`ibis.dipper`, `dipper.ibis`) adds
them to the same object:

    t.window_by("ts").cumulate(step=ibis.interval(minutes=1), size=ibis.interval(hours=1))
    t.window_by("ts").session(gap=ibis.interval(minutes=5)).group_by("user").agg(...)

Both give the columns `window_start`, `window_end`, the groups and the
metrics, as tumble and hop do.  A session window is kept per group: the
group columns become the function's PARTITION BY.
"""

from typing import Literal, Optional

import ibis.common.exceptions as com
import ibis.expr.datatypes as dt
import ibis.expr.operations as ops
import ibis.expr.types as ir
from ibis.common.annotations import attribute
from ibis.common.collections import FrozenOrderedDict
from ibis.common.grounds import Concrete
from ibis.common.typing import VarTuple
from ibis.expr.operations.relations import Relation, Unaliased
from ibis.expr.schema import Schema
from ibis.expr.types.relations import unwrap_aliases
from ibis.expr.types.temporal_windows import WindowedTable


class DipperWindowAggregate(Relation):
    """A CUMULATE or SESSION window aggregation (Ibis's WindowAggregate
    knows only tumble and hop).  window_size is the maximum size of a
    cumulating window or a session's gap; window_slide a cumulating
    window's step."""

    parent: Relation
    window_type: Literal["cumulate", "session"]
    time_col: Unaliased[ops.Column]
    groups: FrozenOrderedDict[str, Unaliased[ops.Column]]
    metrics: FrozenOrderedDict[str, Unaliased[ops.Scalar]]
    window_size: ops.Scalar[dt.Interval]
    window_slide: Optional[ops.Scalar[dt.Interval]] = None
    window_offset: Optional[ops.Scalar[dt.Interval]] = None
    partition_by: VarTuple[str] = ()

    @attribute
    def values(self):
        return FrozenOrderedDict({**self.groups, **self.metrics})

    @attribute
    def schema(self):
        return Schema({
            "window_start": dt.timestamp,
            "window_end": dt.timestamp,
            **{k: v.dtype for k, v in self.groups.items()},
            **{k: v.dtype for k, v in self.metrics.items()},
        })


class DipperWindowedTable(Concrete):
    """`t.window_by(col)` after `.cumulate()` or `.session()`."""

    parent: ir.Table
    time_col: ops.Column
    window_type: Literal["cumulate", "session"]
    window_size: ir.IntervalScalar
    window_slide: Optional[ir.IntervalScalar] = None
    window_offset: Optional[ir.IntervalScalar] = None
    groups: Optional[FrozenOrderedDict[str, Unaliased[ops.Column]]] = None

    def group_by(self, *by, **named):
        by = tuple(v for v in by if v is not None)
        groups = unwrap_aliases(self.parent.bind(*by, **named))
        return self.copy(groups=groups)

    def aggregate(self, metrics=(), /, *, by=(), **kwargs):
        by = unwrap_aliases(self.parent.bind(by))
        metrics = unwrap_aliases(self.parent.bind(metrics, **kwargs))
        groups = dict(self.groups) if self.groups is not None else {}
        groups.update(by)
        partition = ()
        if self.window_type == "session":
            parent = self.parent.op()
            for name, g in groups.items():
                if not (isinstance(g, ops.Field) and g.rel == parent):
                    raise com.IbisInputError(
                        "a session window is kept per group: group by columns of the table "
                        "(%r is an expression; compute it in a mutate() first)" % name)
            partition = tuple(g.name for g in groups.values())
        return DipperWindowAggregate(
            self.parent, self.window_type, self.time_col, groups=groups, metrics=metrics,
            window_size=self.window_size, window_slide=self.window_slide,
            window_offset=self.window_offset, partition_by=partition).to_expr()

    agg = aggregate


def _cumulate(self, *, step, size, offset=None):
    """Cumulating windows (Flink's CUMULATE): each window starts at a
    multiple of `size` and grows by `step` up to `size`; a row belongs to
    every window of its period that has reached it."""
    return DipperWindowedTable(self.parent, self.time_col, "cumulate", window_size=size,
                               window_slide=step, window_offset=offset, groups=self.groups)


def _session(self, *, gap):
    """Session windows (Flink's SESSION): a window per group that closes
    once no row has come for `gap`."""
    return DipperWindowedTable(self.parent, self.time_col, "session", window_size=gap,
                               groups=self.groups)


if not hasattr(WindowedTable, "cumulate"):
    WindowedTable.cumulate = _cumulate
if not hasattr(WindowedTable, "session"):
    WindowedTable.session = _session
