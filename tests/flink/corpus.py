"""corpus — the batch and streaming cases of dipper's test corpus
(tests/batch/cases/*.test, tests/stream/cases/*.test; the format is in
tests/stream/README.md) run on Flink and compared with dipper's answers.

Owns: reading a .test file into cases; making a case's memory sources
bounded files (each table's pushed rows, in order, as one JSON lines file)
and its query a SELECT; dipper's answer — in batch mode the CLI over those
files (`dipper run --format json`), in streaming mode the case's own
expectations, which `streamtest` (run on the file first: it must pass)
proves are what dipper's sink got in each micro-batch, applied batch after
batch (every row in append mode, the newest per key in update mode, the last
batch in complete mode); the list of annotated differences
(corpus_expected.txt).  Flink reads the files in one go, so its streaming
answer is the query's final one over all rows; a case whose dipper run
stops before its inputs end (no `--- end`) is compared only when its query
keeps no state.

Not compared, each said in the report: cases that expect an error (dipper's
own refusals), cases with several queries or a callback sink, cases that
write files, cases reading a generator (datagen, nexmark: each engine's
generator makes its own rows) or a broker, and update-mode cases whose key
cannot be read off the GROUP BY.
"""
import json
import os
import re
import subprocess

import compare
import engines

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class TestCase:
    def __init__(self, file, name, line):
        self.file = file
        self.name = name
        self.line = line
        self.sql_lines = []
        self.sections = []  # (header words, lines)

    @property
    def sql(self):
        return "\n".join(self.sql_lines)

    def label(self):
        return "%s :: %s" % (self.file, self.name)


def parse(path, rel):
    cases, cur, section = [], None, None
    with open(path) as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("==="):
                cur = TestCase(rel, line[3:].strip(), no)
                cases.append(cur)
                section = None
            elif cur is None:
                continue
            elif line.startswith("---"):
                section = (line[3:].split(), [])
                cur.sections.append(section)
            elif section is None:
                cur.sql_lines.append("" if line.startswith("#") else line)
            elif not line.startswith("#") or section[0][:1] == ["file"]:
                section[1].append(line)
    return cases


def load_expected():
    """corpus_expected.txt: `file :: case :: why` lines."""
    out = {}
    path = os.path.join(HERE, "corpus_expected.txt")
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" :: ")]
            if len(parts) != 3:
                raise SystemExit("%s: a line is `file :: case :: why`: %s" % (path, line))
            out[parts[0] + " :: " + parts[1]] = parts[2]
    return out


_CREATE = re.compile(r"CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?", re.I)
_INSERT = re.compile(r"^\s*INSERT\s+(?:INTO|OVERWRITE)\s+`?(\w+)`?\s*(\([^)]*\))?\s*", re.I | re.S)


def _with_span(stmt):
    """(start, end) of the WITH ( ... ) clause of a CREATE TABLE, or None."""
    m = re.search(r"\bWITH\s*\(", stmt, re.I)
    if not m:
        return None
    depth, i, quote = 0, m.end() - 1, None
    while i < len(stmt):
        c = stmt[i]
        if quote:
            if c == quote:
                quote = None
        elif c == "'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return m.start(), i + 1
        i += 1
    return None


def translate(case, folder):
    """The case as (setup SQL for dipper, setup SQL for Flink, the query,
    the sink's name, the runtime mode, the output mode), writing each
    memory source's rows to folder/<table>/rows.json; or a string saying
    why the case is not compared."""
    stmts = engines.split_statements(case.sql)
    inserts = [s for s in stmts if _INSERT.match(s)]
    nqueries = len(re.findall(r"\bINSERT\s+(?:INTO|OVERWRITE)\b", case.sql, re.I))
    if nqueries != 1 or len(inserts) != 1:
        return "%d queries in the case (one is compared)" % nqueries
    if re.search(r"'connector'\s*=\s*'callback'", case.sql):
        return "a callback sink"
    gen = re.search(r"'connector'\s*=\s*'(datagen|nexmark|socket|kafka|kinesis)'", case.sql, re.I)
    if gen:
        return ("reads a %s source, whose rows are each engine's own (the nexmark suite compares "
                "Nexmark through files)" % gen.group(1))
    if re.search(r"\bASOF\b", case.sql, re.I):
        return "an ASOF JOIN (DuckDB's and Snowflake's form), which Flink's SQL does not have"
    if re.search(r"\bwindow\s*\(\s*`?\w+`?\s*,\s*'", case.sql, re.I):
        return "Spark's window() grouping function, which Flink's SQL does not have"
    if re.search(r"'dipper\.trigger'", case.sql):
        return "a micro-batch trigger (Spark's triggers), which Flink does not have"
    heads = [s[0][0] if s[0] else "" for s in case.sections]
    if "clock" in heads:
        return "runs on a synthetic processing-time clock, which Flink's run does not share"
    if "error" in heads:
        return "expects an error (dipper's own refusal)"
    if "file" in heads:
        return "writes input files of its own"
    sink = _INSERT.match(inserts[0]).group(1).lower()
    pushed = {}
    for words, lines in case.sections:
        if words and words[0] == "batch":
            table = (words[1] if len(words) > 1 else "src").lower()
            pushed.setdefault(table, []).extend(l for l in lines if l.strip())
    batch = bool(re.search(r"'execution\.runtime-mode'\s*=\s*'batch'", case.sql, re.I))
    m = re.search(r"'dipper\.output-mode'\s*=\s*'(\w+)'", case.sql, re.I)
    out_mode = m.group(1).lower() if m else None
    d_setup, f_setup = [], []
    for s in stmts:
        if _INSERT.match(s):
            continue
        if re.match(r"^\s*(SET|RESET)\b", s, re.I):
            d_setup.append(s)
            continue
        cm = _CREATE.match(s)
        if cm and re.search(r"'connector'\s*=\s*'memory'", s, re.I):
            name = cm.group(1).lower()
            if name == sink:
                continue
            span = _with_span(s)
            path = os.path.join(folder, name)
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, "rows.json"), "w") as f:
                for row in pushed.get(name, []):
                    f.write(row.strip() + "\n")
            opts = "'connector' = 'filesystem', 'path' = '%s', 'format' = 'json'" % path
            if re.search(r"'dipper\.bad-records'\s*=\s*'(skip|dead-letter)'", s, re.I):
                # A bad record skipped (or set aside in a file, which the
                # answer does not see): Flink's json.ignore-parse-errors.
                d_setup.append(s[:span[0]] + "WITH (%s, 'dipper.bad-records' = 'skip')" % opts + s[span[1]:])
                f_setup.append(s[:span[0]] + "WITH (%s, 'json.ignore-parse-errors' = 'true')" % opts + s[span[1]:])
                continue
            s = s[:span[0]] + "WITH (%s)" % opts + s[span[1]:]
        elif cm and cm.group(1).lower() == sink:
            return "the sink is not a memory table"
        d_setup.append(s)
        f_setup.append(s)
    query = inserts[0][_INSERT.match(inserts[0]).end():]
    return (";\n".join(d_setup) + ";\n" if d_setup else "", ";\n".join(f_setup) + ";\n" if f_setup else "",
            query, sink, batch, out_mode)


class _Cells:
    """A reader of one expected row as tests/stream/streamtest.c writes it:
    cells separated by ` | `; NULL; strings bare at the top level unless
    they need quotes, always quoted when nested ('it''s', \\n for a line
    break); arrays [a, b]; rows {name: v} and maps {k: v}, whose values are
    compared in order (compare.canon does the same with Flink's Row and
    dict)."""

    def __init__(self, line):
        self.s = line
        self.i = 0

    def _skip_spaces(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def _quoted(self):
        out = []
        self.i += 1
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "'":
                if self.s.startswith("''", self.i):
                    out.append("'")
                    self.i += 2
                    continue
                self.i += 1
                return "".join(out)
            if self.s.startswith("\\n", self.i):
                out.append("\n")
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        raise ValueError("unterminated quote in expected row: " + self.s)

    def _bare(self, stops):
        j = self.i
        while j < len(self.s) and self.s[j] not in stops:
            j += 1
        text = self.s[self.i:j].strip(" ")
        self.i = j
        return None if text == "NULL" else text

    def value(self, nested):
        self._skip_spaces()
        if self.s.startswith("'", self.i):
            return self._quoted()
        if self.s.startswith("x'", self.i):
            return self._bare(",]}" if nested else "|")
        if self.s.startswith("[", self.i) or self.s.startswith("{", self.i):
            close = "]" if self.s[self.i] == "[" else "}"
            self.i += 1
            items = []
            self._skip_spaces()
            if self.s.startswith(close, self.i):
                self.i += 1
                return items
            while True:
                v = self.value(True)
                self._skip_spaces()
                if close == "}" and self.s.startswith(":", self.i):
                    self.i += 1
                    v = self.value(True)  # a row's field or a map's value
                    self._skip_spaces()
                items.append(v)
                if self.s.startswith(",", self.i):
                    self.i += 1
                    continue
                if self.s.startswith(close, self.i):
                    self.i += 1
                    return items
                raise ValueError("malformed nested value in expected row: " + self.s)
        return self._bare(",]}:" if nested else "|")

    def row(self, nested_cols=()):
        """The cells; a cell is read as an array, row or map only where
        nested_cols says its column is one (a string such as '[1]' stands
        bare at the top level)."""
        cells = []
        while True:
            k = len(cells)
            self._skip_spaces()
            if k < len(nested_cols) and nested_cols[k] or self.s.startswith("'", self.i):
                cells.append(self.value(False))
            else:
                cells.append(self._bare("|"))
            self._skip_spaces()
            if self.i >= len(self.s):
                return cells
            if self.s[self.i] != "|":
                raise ValueError("expected ` | ` in expected row: " + self.s)
            self.i += 1
            if self.s.startswith(" ", self.i):
                self.i += 1


def _expect_rows(lines, nested_cols=()):
    rows = []
    for line in lines:
        if not line.strip() or line.strip() == "(none)":
            continue
        rows.append(compare.canon_row(_Cells(line).row(nested_cols)))
    return rows


_NESTED_TYPE = re.compile(r"^\s*`?\w+`?\s+(ARRAY|ROW|MAP|MULTISET)\b", re.I)


def _sink_nested(case, sink):
    """For each column of the sink's CREATE TABLE, whether its type is an
    ARRAY, ROW, MAP or MULTISET."""
    for stmt in engines.split_statements(case.sql):
        m = _CREATE.match(stmt.strip())
        if not m or m.group(1).lower() != sink:
            continue
        start = stmt.index("(", m.end())
        depth, cols, cur = 0, [], []
        for ch in stmt[start + 1:]:
            if ch in "(<":
                depth += 1
            elif ch in ")>":
                if depth == 0:
                    break
                depth -= 1
            if ch == "," and depth == 0:
                cols.append("".join(cur))
                cur = []
            else:
                cur.append(ch)
        cols.append("".join(cur))
        return [bool(_NESTED_TYPE.match(c)) for c in cols if not re.match(r"^\s*(WATERMARK|PRIMARY)\b", c, re.I)]
    return []


def _group_key(query):
    """0-based positions of the GROUP BY columns in the select list, when
    each is a bare column named there; None otherwise."""
    m = re.search(r"\bSELECT\b(.*?)\bFROM\b.*\bGROUP\s+BY\b(.*?)(\bHAVING\b|\bORDER\b|$)", query, re.I | re.S)
    if not m:
        return None
    items = [i.strip() for i in engines.split_statements(m.group(1).replace(",", ";"))]
    names = []
    for item in items:
        am = re.search(r"(?:\bAS\s+)?`?(\w+)`?\s*$", item, re.I)
        names.append(am.group(1).lower() if am else item.lower())
    keys = []
    for g in m.group(2).split(","):
        g = g.strip().lower().split(".")[-1].strip("`")
        if g not in names:
            return None
        keys.append(names.index(g))
    return keys


_STATEFUL = re.compile(r"\b(GROUP\s+BY|JOIN|OVER|ROW_NUMBER|TUMBLE|HOP|SESSION|CUMULATE|DISTINCT|MATCH_RECOGNIZE)\b", re.I)


_KINDS = ("+I", "-U", "+U", "-D")
_TIMED = re.compile(r"\b(TUMBLE|HOP|SESSION|CUMULATE|OVER|MATCH_RECOGNIZE|WATERMARK)\b", re.I)


def _is_expect(words, sink):
    """An expectation of the compared sink: `--- expect`, `--- expect
    ordered`, or `--- expect <the sink's table>`."""
    return bool(words) and words[0] == "expect" and (
        len(words) < 2 or words[1] == "ordered" or words[1].lower() == sink)


def _changelog_answer(case, query, sink):
    """A case whose sink got changes (each expected row led by its kind,
    exec/changelog.h): the changes applied, as Flink's are.  Such a query
    keeps no time-driven state, so after its last micro-batch every pushed
    row has been taken in and the table is final even without `--- end`;
    None when the case is not one of these."""
    changes = []
    for words, lines in case.sections:
        if not _is_expect(words, sink):
            continue
        for line in lines:
            if not line.strip() or line.strip() == "(none)":
                continue
            cells = _Cells(line).row([False] + _sink_nested(case, sink))
            if cells[0] not in _KINDS:
                return None
            changes.append((cells[0], compare.canon_row(cells[1:])))
    if not changes or _TIMED.search(case.sql):
        return None
    try:
        return compare.apply_changelog(changes)
    except ValueError as e:
        return "dipper's changes do not apply: %s" % e


def dipper_stream_answer(case, query, out_mode, sink):
    """dipper's final table of a streaming case, from its expectations."""
    applied = _changelog_answer(case, query, sink)
    if applied is not None:
        return applied
    nested = _sink_nested(case, sink)
    blocks = [_expect_rows(lines, nested) for words, lines in case.sections if _is_expect(words, sink)]
    ended = any(words and words[0] == "end" for words, _ in case.sections)
    if not ended and _STATEFUL.search(query):
        return "the case stops before its inputs end (no `--- end`) and its query keeps state"
    if out_mode == "complete":
        return blocks[-1] if blocks else []
    if out_mode == "update":
        key = _group_key(query)
        if key is None:
            return "update mode, and the key is not a bare GROUP BY column of the select list"
        return compare.apply_upserts(blocks, key)
    return [r for b in blocks for r in b]


def _streamtest_passes(streamtest, path):
    p = subprocess.run([streamtest, path], capture_output=True, text=True, timeout=600)
    return p.returncode == 0, (p.stdout + p.stderr).strip().splitlines()[-1:]


def run(args, report, dipper, flink, judge):
    expected = load_expected()
    seen = set()
    wanted = [c for c in args.corpus.split(",") if c]
    streamtest = os.path.join(os.path.dirname(os.path.abspath(args.dipper)), "tests", "stream", "streamtest")
    for kind in ("batch", "stream"):
        folder = os.path.join(ROOT, "tests", kind, "cases")
        for fname in sorted(os.listdir(folder)):
            if not fname.endswith(".test") or (wanted and "%s/%s" % (kind, fname[:-5]) not in wanted):
                continue
            rel = "%s/%s" % (kind, fname)
            path = os.path.join(folder, fname)
            if kind == "stream":
                ok, last = _streamtest_passes(streamtest, path)
                if not ok:
                    report.add(rel, "streaming", "ERROR", "streamtest does not pass on the file, so its "
                               "expectations are not dipper's answers: " + " ".join(last))
                    continue
            for i, case in enumerate(parse(path, rel)):
                run_case(args, report, dipper, flink, judge, case, i, expected, seen)
    for label in sorted(set(expected) - seen):
        if not wanted or any(label.startswith(w + ".test") for w in wanted):
            report.add(label, "-", "STALE", "corpus_expected.txt names a case that was not compared")


def run_case(args, report, dipper, flink, judge, case, index, expected, seen):
    label = case.label()
    folder = os.path.join(args.workdir, "corpus", case.file.replace("/", "_")[:-5], str(index))
    os.makedirs(folder, exist_ok=True)
    t = translate(case, folder)
    mode = "batch" if isinstance(t, tuple) and t[4] else "streaming"
    if isinstance(t, str):
        report.add(label, "-", "SKIPPED", t)
        return
    d_setup, f_setup, query, sink, batch, out_mode = t
    d_rows = d_err = f_rows = f_err = None
    if batch:
        try:
            d_rows = dipper.batch("corpus_%s_%d" % (case.file.replace("/", "_")[:-5], index), d_setup, query)
        except engines.EngineError as e:
            d_err = str(e)
    else:
        d_rows = dipper_stream_answer(case, query, out_mode, sink)
        if isinstance(d_rows, str):
            report.add(label, mode, "SKIPPED", d_rows)
            return
    try:
        f_rows = flink.run(batch, f_setup, query)
    except engines.EngineError as e:
        f_err = str(e)
    why = expected.get(label)
    if why is not None:
        seen.add(label)
    judge(report, label, mode, d_rows, d_err, f_rows, f_err, None, why)
