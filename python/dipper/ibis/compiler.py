"""The Ibis compiler of dipper's backend: Ibis's Flink SQL compiler
(sqlglot) with the SQL that compiler gets wrong put right, and dipper's
dialect where it says more.

What differs from `ibis.backends.sql.compilers.flink.FlinkCompiler`:

- Window table functions over anything but a table.  Flink's compiler
  writes `TABLE(TUMBLE(TABLE SELECT ... WHERE ..., ...))` for a filtered or
  projected table — not SQL.  Here the input goes into a WITH clause and
  the function reads `TABLE <that name>` (valid Flink SQL, and what dipper
  asks for: a table argument names a table, a view or a WITH query).
- Intervals.  The Flink dialect's generator appends the precision to the
  unit in place (`unit.args["this"] += "(2)"`), so every further
  generation of the same tree adds it again: `INTERVAL '1' HOUR(2)(2)`.
  Here an interval is written without changing the tree: `INTERVAL '1'
  HOUR`, with a leading precision only where the count needs more than
  the default two digits (`INTERVAL '100' DAY(3)`), as Flink requires.
  An interval of a computed count is `count * INTERVAL '1' UNIT`.
- Top-N.  Ibis numbers rows from 0 (`ROW_NUMBER() OVER (...) - 1`) and
  puts a filter on a window function in a QUALIFY clause, which Flink
  does not have; neither form is Flink's Top-N pattern, so no engine keeps
  a bounded state for it.  Here both become the pattern: the rank as a
  column of a subquery, `ROW_NUMBER() OVER (...) AS rn`, and the filter on
  it outside, with the bound shifted by one (`rn < 3` on Ibis's 0-based
  number is `rn < 4` on SQL's); where the number itself is selected it is
  `rn - 1`, so the values are Ibis's.
- CUMULATE and SESSION windows (windows.py adds `.cumulate()` and
  `.session()` to `Table.window_by(...)`), which Ibis's Flink compiler has
  no rule for.
- `asof_join(..., tolerance=)` as dipper's `TOLERANCE` clause (asof.py):
  Ibis's own form of it (an as-of join, a filter, a left join back on equal
  times) matches nothing unless the times are equal.
- In-memory tables are dipper memory tables the backend registers, read
  by name (Flink's compiler inlines them as VALUES).
"""

import ibis.common.exceptions as com
import sqlglot as sg
import sqlglot.expressions as sge

from ibis.backends.sql.compilers.flink import FlinkCompiler
from ibis.backends.sql.dialects import Flink

from . import asof as _asof  # noqa: F401  (as-of joins with a tolerance)
from . import windows as _windows  # noqa: F401  (registers the window ops)


def _interval_sql(self, e):
    arg = e.args.get("this")
    unit = e.args.get("unit")
    unit_sql = self.sql(unit) if unit is not None else ""
    if isinstance(arg, sge.Literal):
        text = str(arg.this)
        digits = text.lstrip("+-")
        if digits.isdigit() and len(digits) > 2 and unit_sql.isalpha():
            unit_sql = "%s(%d)" % (unit_sql, len(digits))
        return "INTERVAL '%s' %s" % (text.replace("'", "''"), unit_sql)
    # INTERVAL <expression> UNIT is not SQL: scale one unit instead
    return "(%s * INTERVAL '1' %s)" % (self.sql(arg), unit_sql)


class Dipper(Flink):
    """sqlglot dialect of dipper: Flink's as Ibis writes it, intervals
    written without side effects."""

    class Generator(Flink.Generator):
        TRANSFORMS = Flink.Generator.TRANSFORMS.copy() | {sge.Interval: _interval_sql}


# ---- Top-N ----

_RANK_NAMES = {"ROW_NUMBER", "RANK", "DENSE_RANK"}


def _is_rank_window(node):
    if not isinstance(node, sge.Window):
        return False
    fn = node.this
    if isinstance(fn, sge.RowNumber):
        return True
    name = fn.name if isinstance(fn, sge.Anonymous) else getattr(fn, "sql_name", lambda: "")()
    return str(name).upper() in _RANK_NAMES


def _unparen(node):
    while isinstance(node, sge.Paren):
        node = node.this
    return node


def _zero_based_rank(node):
    """The window of `RANK_FN() OVER (...) - 1` (Ibis's 0-based numbering),
    or None."""
    node = _unparen(node)
    if isinstance(node, sge.Sub) and _is_rank_window(_unparen(node.this)):
        one = node.expression
        if isinstance(one, sge.Literal) and not one.is_string and str(one.this) == "1":
            return _unparen(node.this)
    return None


_COMPARISONS = (sge.EQ, sge.NEQ, sge.LT, sge.LTE, sge.GT, sge.GTE)


def _int_literal(node):
    node = _unparen(node)
    if isinstance(node, sge.Literal) and not node.is_string:
        try:
            return int(str(node.this))
        except ValueError:
            return None
    if isinstance(node, sge.Neg):
        v = _int_literal(node.this)
        return None if v is None else -v
    return None


def _output_names(select):
    names = []
    for e in select.expressions:
        if isinstance(e, sge.Star) or (isinstance(e, sge.Column) and isinstance(e.this, sge.Star)):
            return None
        names.append(e.alias_or_name)
    return names


def _qualify_to_subquery(select, counter):
    """SELECT cols FROM x WHERE w QUALIFY cond  ->
    SELECT cols FROM (SELECT cols, RANK() OVER (...) - 1 AS _rank0 FROM x WHERE w) AS _q0
    WHERE cond[with _q0._rank0 for the window]."""
    qualify = select.args.get("qualify")
    names = _output_names(select)
    if qualify is None or names is None:
        return None
    cond = qualify.this.copy()
    qalias = "_dipper_q%d" % next(counter)
    added = []

    def swap(node):
        w = _zero_based_rank(node)
        if w is not None or _is_rank_window(node):
            alias = "_dipper_rank%d" % len(added)
            added.append(sge.alias_(node.copy(), alias, quoted=True))
            return sg.column(alias, table=qalias, quoted=True)
        return node

    cond = cond.transform(swap, copy=False)
    if not added:
        return None
    inner = select.copy()
    inner.set("qualify", None)
    order, limit = inner.args.get("order"), inner.args.get("limit")
    inner.set("order", None)
    inner.set("limit", None)
    inner.set("expressions", inner.expressions + added)
    outer = sg.select(*[sg.column(n, table=qalias, quoted=True) for n in names], copy=False).from_(
        inner.subquery(sg.to_identifier(qalias, quoted=True), copy=False), copy=False).where(cond, copy=False)
    if order is not None:
        outer.set("order", order.transform(
            lambda n: sg.column(n.name, table=qalias, quoted=True) if isinstance(n, sge.Column) else n))
    if limit is not None:
        outer.set("limit", limit)
    return outer


def _rank_columns(sub_select):
    """{alias: projection} of the 0-based rank columns of a subquery."""
    out = {}
    for e in sub_select.expressions:
        if isinstance(e, sge.Alias) and _zero_based_rank(e.this) is not None:
            out[e.alias] = e
    return out


def _shift_rank_filter(select):
    """Over FROM (SELECT ..., RANK() OVER (...) - 1 AS rn ...) AS t with a
    WHERE comparing t.rn to integers: number the rank from 1 inside (Flink's
    Top-N pattern), compare with the bounds plus one, and give rn - 1
    wherever else the outer query uses it."""
    src = select.args.get("from_", select.args.get("from"))
    where = select.args.get("where")
    if src is None or where is None or not isinstance(src.this, sge.Subquery):
        return False
    sub = src.this
    inner = sub.this
    if not isinstance(inner, sge.Select):
        return False
    ranks = _rank_columns(inner)
    if not ranks:
        return False
    talias = sub.alias_or_name

    def is_rank_ref(n):
        return (isinstance(n, sge.Column) and n.name in ranks and
                (not n.table or n.table == talias))

    used = set()
    conds = []
    for conj in where.this.flatten() if isinstance(where.this, sge.And) else [where.this]:
        c = _unparen(conj)
        if isinstance(c, _COMPARISONS):
            left, right = _unparen(c.this), _unparen(c.expression)
            if is_rank_ref(left) and _int_literal(right) is not None:
                used.add(left.name)
                conds.append((c, "expression", _int_literal(right)))
                continue
            if is_rank_ref(right) and _int_literal(left) is not None:
                used.add(right.name)
                conds.append((c, "this", _int_literal(left)))
                continue
    if not used:
        return False
    # every other use of a shifted rank in WHERE would see the 1-based number
    taken = {id(c) for c, _, _ in conds}
    for conj in where.this.flatten() if isinstance(where.this, sge.And) else [where.this]:
        if id(_unparen(conj)) not in taken and any(is_rank_ref(n) and n.name in used
                                                  for n in conj.find_all(sge.Column)):
            return False
    names = _output_names(inner)
    if names is None:
        return False
    for name in used:
        ranks[name].set("this", _zero_based_rank(ranks[name].this).copy())
    for c, side, k in conds:
        c.set(side, sge.convert(k + 1))

    def minus_one(n):
        if is_rank_ref(n) and n.name in used:
            return sge.paren(sge.Sub(this=n.copy(), expression=sge.convert(1)), copy=False)
        return n

    outs = _output_names(select)
    if outs is None:  # SELECT *: spell out the subquery's columns
        exprs = []
        for n in names:
            col = sg.column(n, table=talias, quoted=True)
            exprs.append(sge.alias_(minus_one(col), n, quoted=True) if n in used else col)
        select.set("expressions", exprs)
    else:
        select.set("expressions", [
            e.transform(minus_one) if not (isinstance(e, sge.Column) and e.name in used)
            else sge.alias_(minus_one(e), e.name, quoted=True) for e in select.expressions])
    for key in ("order", "group", "having"):
        part = select.args.get(key)
        if part is not None:
            select.set(key, part.transform(minus_one))
    return True


def _top_n(tree):
    import itertools
    counter = itertools.count()
    for s in list(tree.find_all(sge.Select)):
        if s.args.get("qualify") is not None:
            outer = _qualify_to_subquery(s, counter)
            if outer is not None:
                if s is tree:
                    tree = outer
                else:
                    s.replace(outer)
    for s in list(tree.find_all(sge.Select)):
        _shift_rank_filter(s)
    return tree


class DipperCompiler(FlinkCompiler):
    __slots__ = ()

    dialect = Dipper

    def to_sqlglot(self, expr, *, limit=None, params=None):
        tree = super().to_sqlglot(expr, limit=limit, params=params)
        return _top_n(tree)

    def visit_InMemoryTable(self, op, *, name, schema, data):
        # the backend registered it as a memory table of that name
        return sg.table(name, quoted=self.quoted)

    # -- as-of joins --

    def visit_AsofTolerance(self, op, *, left, right, tolerance):
        return sge.Var(this="TOLERANCE %s" % tolerance.sql(self.dialect))

    # Ibis's join kinds of one engine each: ClickHouse's ANY joins (one
    # arbitrary match per row) and DuckDB's join by row position, which
    # Flink's SQL (and a stream, whose rows have no position) lacks
    _REFUSED_JOINS = {
        "any_inner": "ClickHouse's ANY JOIN (one arbitrary match per row)",
        "any_left": "ClickHouse's LEFT ANY JOIN (one arbitrary match per row)",
        "positional": "DuckDB's POSITIONAL JOIN (rows paired by position)",
    }

    def visit_JoinLink(self, op, *, how, table, predicates):
        if how in self._REFUSED_JOINS:
            raise com.UnsupportedOperationError(
                "dipper: the %s join is %s, which dipper's SQL does not have; use how='inner' "
                "or 'left' (after a Top-N, row_number() == 0, for one match per key), or "
                "asof_join for the latest match in time" % (how, self._REFUSED_JOINS[how]))
        tol = [p for p in predicates if isinstance(p, sge.Var) and p.this.startswith("TOLERANCE ")]
        if how != "asof" or not tol:
            return super().visit_JoinLink(op, how=how, table=table, predicates=predicates)
        rest = [p for p in predicates if p not in tol]
        on = sg.and_(*rest).sql(self.dialect) + " " + tol[0].this
        return sge.Join(this=table, side="asof", kind="left", on=sge.Var(this=on))

    # -- window table functions --

    def _window_input(self, parent):
        """(the TVF's table argument, a CTE to add or None)."""
        if isinstance(parent, sge.Table):
            return self.v["TABLE %s" % sge.Table(
                this=parent.this, db=parent.args.get("db"),
                catalog=parent.args.get("catalog")).sql(self.dialect)], None
        name = "%s_in" % parent.alias_or_name
        return self.v["TABLE %s" % sg.to_identifier(name, quoted=True).sql(self.dialect)], \
            (name, parent.this)

    def _window_select(self, parent, fn, args, groups, metrics):
        window_start = sg.column("window_start", table=parent.alias_or_name, quoted=True)
        window_end = sg.column("window_end", table=parent.alias_or_name, quoted=True)
        q = (
            sg.select(window_start, window_end, *self._cleanup_names(groups),
                      *self._cleanup_names(metrics), copy=False)
            .from_(self.f.table(fn(*args)).as_(parent.alias_or_name, quoted=True), copy=False)
            .group_by(*self._generate_groups([window_start, window_end, *groups.values()]),
                      copy=False)
        )
        return q

    def _tvf(self, op, parent, window_type, time_col, groups, metrics, size, slide, offset,
             partition=()):
        table_arg, cte = self._window_input(parent)
        if partition:
            keys = ", ".join(sg.to_identifier(k, quoted=True).sql(self.dialect) for k in partition)
            table_arg = self.v["%s PARTITION BY (%s)" % (table_arg.sql(self.dialect), keys)]
        descriptor = self.f.descriptor(time_col.this)
        if window_type == "tumble":
            args = [table_arg, descriptor, size, offset]
        elif window_type in ("hop", "cumulate"):
            args = [table_arg, descriptor, slide, size, offset]
        else:  # session: the gap
            args = [table_arg, descriptor, size]
        fn = getattr(self.f, window_type)
        q = self._window_select(parent, fn, [a for a in args if a is not None], groups, metrics)
        if cte is not None:
            q = q.with_(sg.to_identifier(cte[0], quoted=True), as_=cte[1], copy=False)
        return q

    def visit_WindowAggregate(self, op, *, parent, window_type, time_col, groups, metrics,
                              window_size, window_slide, window_offset):
        return self._tvf(op, parent, window_type, time_col, groups, metrics, window_size,
                         window_slide, window_offset)

    def visit_DipperWindowAggregate(self, op, *, parent, window_type, time_col, groups,
                                    metrics, window_size, window_slide, window_offset,
                                    partition_by):
        return self._tvf(op, parent, window_type, time_col, groups, metrics, window_size,
                         window_slide, window_offset, partition=partition_by)


compiler = DipperCompiler()
