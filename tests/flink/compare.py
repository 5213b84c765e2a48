"""compare — one normal form for the answers of dipper and of Flink, and the
comparison of two answers.

Owns: turning a value from either side (dipper's JSON lines; PyFlink's
Python values: int, float, Decimal, str, bool, datetime, Row) into a
canonical value; the changelog of a Flink streaming result applied to a
final table; dipper's streaming output (a sink's files, batch by batch)
applied to a final table; comparing two tables as multisets of rows.

The normal form is the same for every case, and the same for both sides:
numbers become exact decimals (an integer 3, a 3.0 and a DECIMAL 3.000 are
the same number) compared equal when within 1e-9 relative; timestamps become
'YYYY-MM-DD HH:MM:SS[.ffffff]' with trailing zeros of the fraction dropped;
text that reads as a number or a timestamp on either side is that number or
timestamp (a CSV or JSON sink may have written it as text).  Row order is
not compared (rows are sorted first).  Nothing here knows about a case.
"""
import datetime
import decimal
import re

REL_TOL = decimal.Decimal("1e-9")

_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z?$")
_NUM = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def _ts_text(date, time, frac):
    frac = (frac or "").rstrip("0")
    return "%s %s%s" % (date, time, "." + frac if frac else "")


def canon(v):
    """The canonical form of one value: None, ('b', bool), ('n', Decimal),
    ('t', text), ('s', text) or a tuple of canonical values (a ROW or ARRAY)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("n", decimal.Decimal(v))
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return ("s", repr(v))
        return ("n", decimal.Decimal(repr(v)))
    if isinstance(v, decimal.Decimal):
        return ("n", v)
    if isinstance(v, datetime.datetime):
        return ("t", _ts_text(v.strftime("%Y-%m-%d"), v.strftime("%H:%M:%S"), "%06d" % v.microsecond))
    if isinstance(v, datetime.date):
        return ("s", v.isoformat())
    if isinstance(v, str):
        m = _TS.match(v)
        if m:
            return ("t", _ts_text(*m.groups()))
        if _NUM.match(v):
            return ("n", decimal.Decimal(v))
        if v.lower() in ("true", "false"):
            return ("b", v.lower() == "true")
        return ("s", v)
    if isinstance(v, dict):
        return tuple(canon(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return tuple(canon(x) for x in v)
    # pyflink.common.Row and anything else iterable
    try:
        return tuple(canon(x) for x in v)
    except TypeError:
        return ("s", str(v))


def canon_row(values):
    return tuple(canon(v) for v in values)


def _sort_key(c):
    """A total order on canonical values, numbers rounded so that two values
    within the tolerance sort alike."""
    if c is None:
        return (0,)
    if isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str) and c[0] in "bnts":
        kind, v = c
        if kind == "n":
            return (2, "%.9e" % float(v))
        return (1 if kind == "b" else 3, kind, str(v))
    return (4, tuple(_sort_key(x) for x in c))


def row_key(row):
    return tuple(_sort_key(c) for c in row)


def _num_close(a, b):
    if a == b:
        return True
    scale = max(abs(a), abs(b))
    return abs(a - b) <= REL_TOL * scale


def values_equal(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and a[0] in "bnts":
        if not (isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], str)):
            return False
        if a[0] == "n" and b[0] == "n":
            return _num_close(a[1], b[1])
        return a == b
    if not isinstance(b, tuple) or len(a) != len(b):
        return False
    return all(values_equal(x, y) for x, y in zip(a, b))


def rows_equal(a, b):
    return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))


def show_value(c):
    if c is None:
        return "NULL"
    if isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str) and c[0] in "bnts":
        v = c[1]
        if c[0] == "n":
            v = v.normalize() if v == v.to_integral_value() else v
            return format(v, "f") if abs(v.adjusted()) < 30 else str(v)
        if c[0] == "b":
            return "true" if v else "false"
        return str(v)
    return "(" + ", ".join(show_value(x) for x in c) + ")"


def show_row(r):
    return " | ".join(show_value(c) for c in r)


class Diff:
    """The outcome of comparing two tables: equal, or the rows each has that
    the other has not (at most a few of each kept for the report)."""

    def __init__(self, equal, left_only=(), right_only=(), nleft=0, nright=0):
        self.equal = equal
        self.left_only = list(left_only)
        self.right_only = list(right_only)
        self.nleft = nleft
        self.nright = nright

    def describe(self, left="dipper", right="flink", limit=5):
        if self.equal:
            return "%d rows, equal" % self.nleft
        out = ["%s has %d rows, %s has %d" % (left, self.nleft, right, self.nright)]
        for name, rows in ((left, self.left_only), (right, self.right_only)):
            if rows:
                out.append("  only in %s (%d):" % (name, len(rows)))
                out.extend("    " + show_row(r) for r in rows[:limit])
                if len(rows) > limit:
                    out.append("    ...")
        return "\n".join(out)


def compare_tables(left, right):
    """left, right: lists of canonical rows.  Equal as multisets, numbers
    within the tolerance."""
    a = sorted(left, key=row_key)
    b = sorted(right, key=row_key)
    if len(a) == len(b) and all(rows_equal(x, y) for x, y in zip(a, b)):
        return Diff(True, nleft=len(a), nright=len(b))
    # A merge by sort key, tolerant within a run of equal keys.
    left_only, right_only = [], []
    i = j = 0
    while i < len(a) and j < len(b):
        ka, kb = row_key(a[i]), row_key(b[j])
        if rows_equal(a[i], b[j]):
            i += 1
            j += 1
        elif ka < kb:
            left_only.append(a[i])
            i += 1
        else:
            right_only.append(b[j])
            j += 1
    left_only.extend(a[i:])
    right_only.extend(b[j:])
    return Diff(False, left_only, right_only, len(a), len(b))


def apply_changelog(changes, upsert_key=None):
    """changes: (kind, canonical row) in order, kind one of '+I', '-U',
    '+U', '-D' (Flink's RowKind).  Returns the final table.  A retraction
    of a row that is not there is an error of the stream itself.

    Flink leaves out the -U of an update where no operator after it needs
    one (a Top-1 without its rank number sends +U alone, keyed by its
    PARTITION BY).  Such a +U replaces the row of the same upsert_key (0-based
    positions, from the case's `@flink-upsert-key`); without one it is an
    error, never a guess."""
    table = {}
    order = {}
    by_key = {}
    prev = None
    for kind, row in changes:
        k = repr(row)
        if kind == "+U" and prev != "-U":
            if upsert_key is None:
                raise ValueError("Flink sent an update without its -U (an upsert stream): the case needs "
                                 "`-- @flink-upsert-key` (its key's positions); row: " + show_row(row))
            uk = repr(tuple(row[p] for p in upsert_key))
            old = by_key.get(uk)
            if old is not None and table.get(old, 0) > 0:
                table[old] -= 1
        if kind in ("+I", "+U"):
            table[k] = table.get(k, 0) + 1
            order[k] = row
            if upsert_key is not None:
                by_key[repr(tuple(row[p] for p in upsert_key))] = k
        elif kind in ("-U", "-D"):
            n = table.get(k, 0)
            if n == 0:
                raise ValueError("the changelog retracts a row it never inserted: " + show_row(row))
            table[k] = n - 1
        else:
            raise ValueError("unknown row kind %r" % (kind,))
        prev = kind
    rows = []
    for k, n in table.items():
        rows.extend([order[k]] * n)
    return rows


def apply_upserts(batches, key_positions):
    """dipper's update mode: each batch holds the changed rows, the newest
    value of each key replacing the one before.  key_positions are 0-based
    column positions."""
    final = {}
    for rows in batches:
        for row in rows:
            final[repr(tuple(row[p] for p in key_positions))] = row
    return list(final.values())
