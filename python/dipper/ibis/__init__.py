"""The Ibis backend of dipper: `ibis.dipper.connect()`.

    import ibis
    con = ibis.dipper.connect()                          # embedded, streaming mode
    con = ibis.dipper.connect("sc://127.0.0.1:15002", mode="batch")

Registered through the `ibis.backends` entry point of the `dipper` package
(python/pyproject.toml), so it needs `pip install ./python[ibis]` (or the
package and ibis-framework in one environment).  The backend holds one
dipper.Connection (`con.con`); Ibis expressions compile to dipper SQL with
compiler.py (Ibis's Flink compiler, corrected) and run through the package's
public API.  docs/python.md, "The Ibis backend", says what each call does.

`mode` is PySpark's: "streaming" (the default, dipper's own) or "batch", set
as the session's `execution.runtime-mode`.  In streaming mode `execute` and
`to_pyarrow` read bounded inputs to their end (a memory table, a bounded
Kafka or file source) — an unbounded one is refused with the way to run it
— and `insert` / `to_kafka` start a streaming query and give its handle
(dipper.Query); in batch mode they run to completion and give None.

Parquet on the embedded engine is read by pyarrow here, in Python, into a
bounded memory table (the C library has no Parquet reader); on Spark it is
a filesystem table that Spark reads.  Ibis's Python UDFs become dipper
Python functions of the connection (udfs.py).  Catalogs and databases are
dipper's (CREATE/DROP/USE DATABASE, SHOW DATABASES).
"""

import contextlib
import glob
import itertools
import os
from pathlib import Path

import pyarrow as pa

import ibis
import ibis.common.exceptions as com
import ibis.expr.operations as ops
import ibis.expr.schema as sch
import ibis.expr.types as ir
from ibis import util
from ibis.backends import CanCreateCatalog, CanCreateDatabase, NoUrl
from ibis.backends.sql import SQLBackend

import dipper

from . import types as _types
from . import udfs as _udfs
from .compiler import compiler as _compiler

_MODES = ("streaming", "batch")


def _q(name):
    """A quoted identifier of dipper SQL."""
    return "`%s`" % str(name).replace("`", "``")


def _s(text):
    """A string literal of dipper SQL."""
    return "'%s'" % str(text).replace("'", "''")


def interval_sql(value):
    """dipper SQL of an Ibis interval literal (`ibis.interval(seconds=10)`)."""
    node = value.op() if isinstance(value, ir.Expr) else value
    if not isinstance(node, ops.Literal) or not node.dtype.is_interval():
        raise com.IbisInputError("dipper: expected an interval literal such as "
                                 "ibis.interval(seconds=10), got %r" % (value,))
    n = int(node.value)
    unit = node.dtype.resolution.upper()
    prec = "(%d)" % len(str(abs(n))) if len(str(abs(n))) > 2 else ""
    return "INTERVAL '%d' %s%s" % (n, unit, prec)


def _dotted(*parts):
    """A quoted dotted name of the parts that are not None."""
    return ".".join(_q(p) for p in parts if p is not None)


def _options_sql(props):
    return ", ".join("%s = %s" % (_s(k), _s(v)) for k, v in props.items())


def _parquet_dataset(path, kwargs):
    """A pyarrow dataset over the Parquet files of `path`: a file, a
    folder, a glob or a list of those."""
    import pyarrow.dataset as ds

    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    files = []
    for p in map(os.fspath, paths):
        if glob.has_magic(p):
            found = sorted(glob.glob(p, recursive=True))
            if not found:
                raise com.IbisInputError("dipper: read_parquet: no file matches %r" % p)
            files += found
        elif not os.path.exists(p):
            raise com.IbisInputError("dipper: read_parquet: no such file or folder: %s" % p)
        else:
            files.append(p)
    source = files[0] if len(files) == 1 else files
    try:
        return ds.dataset(source, format="parquet", **kwargs)
    except (pa.ArrowInvalid, IsADirectoryError) as e:
        hint = (" (a list may not hold a folder: give the folder alone, or a glob)"
                if "directory" in str(e) else "")
        raise com.IbisInputError("dipper: read_parquet(%r): %s%s" % (path, e, hint)) from e


class Backend(SQLBackend, CanCreateCatalog, CanCreateDatabase, NoUrl):
    name = "dipper"
    compiler = _compiler
    supports_temporary_tables = True
    supports_python_udfs = True

    _schema_views = itertools.count()

    # ---- connecting ----

    def do_connect(self, engine=None, mode="streaming", *, options=None):
        """Open a dipper connection for Ibis.

        Parameters
        ----------
        engine
            None for the embedded engine, or a Spark Connect address
            ("sc://host:15002"), as dipper.connect takes.
        mode
            "streaming" (default) or "batch": the session's
            execution.runtime-mode, for every query of this connection.
        options
            More session options, {key: value} (SET 'key' = 'value'), e.g.
            {"execution.checkpointing.dir": "/tmp/ckpt"}.
        """
        if mode not in _MODES:
            raise com.IbisInputError(
                "Invalid connection mode: %r, must be `streaming` or `batch`" % (mode,))
        self.con = dipper.connect(engine)
        self._mode = mode
        self._udf_names = set()
        self.engine = self.con.engine
        self.con.sql("SET 'execution.runtime-mode' = %s" % _s(mode))
        for k, v in (options or {}).items():
            self.con.sql("SET %s = %s" % (_s(k), _s(v)))

    @classmethod
    def from_connection(cls, con, /, *, mode="streaming"):
        """A backend over an open dipper.Connection (its catalog and options
        are kept; `mode` is set on it)."""
        if mode not in _MODES:
            raise com.IbisInputError(
                "Invalid connection mode: %r, must be `streaming` or `batch`" % (mode,))
        new = cls()
        new._can_reconnect = False
        new.con = con
        new._mode = mode
        new._udf_names = set()
        new.engine = con.engine
        con.sql("SET 'execution.runtime-mode' = %s" % _s(mode))
        return new

    def disconnect(self):
        con = getattr(self, "con", None)
        if con is not None:
            con.close()

    @property
    def mode(self):
        """"streaming" or "batch" (PySpark's backend's property)."""
        return self._mode

    @property
    def version(self):
        return dipper.__version__

    # ---- SQL ----

    def raw_sql(self, query, **kwargs):
        """Run dipper SQL on the connection: the dipper.Result of a query (run
        when first fetched), or None (dipper.Connection.sql)."""
        with contextlib.suppress(AttributeError):
            query = query.sql(dialect=self.dialect)
        return self.con.sql(query, **kwargs)

    def _run(self, sql):
        """An INSERT: run to completion in batch mode (None), started as a
        streaming query in streaming mode (its dipper.Query)."""
        if self._mode == "streaming":
            queries = self.con.start(sql)
            return queries[0] if len(queries) == 1 else queries
        self.con.sql(sql)
        return None

    def _get_schema_using_query(self, query):
        name = "_dipper_ibis_schema_%d" % next(self._schema_views)
        self.con.sql("CREATE TEMPORARY VIEW %s AS %s" % (_q(name), query))
        try:
            return self._describe(name)
        finally:
            self.con.sql("DROP TEMPORARY VIEW IF EXISTS %s" % _q(name))

    def _describe(self, name, catalog=None, database=None):
        try:
            rows = self.con.sql("DESCRIBE %s" % self._name(name, catalog, database)).fetchall()
        except dipper.NameError as e:
            raise com.TableNotFound(name) from e
        return sch.Schema({r[0]: _types.from_sql(r[1], nullable=r[2]) for r in rows})

    def get_schema(self, table_name, *, catalog=None, database=None):
        """The columns of a table or view (DESCRIBE) as an Ibis schema."""
        return self._describe(table_name, catalog, database)

    def list_tables(self, *, like=None, database=None):
        """The tables and views of the current database, or of `database`
        ("db", "catalog.db" or ("catalog", "db")) (SHOW TABLES)."""
        names = [r[0] for r in self.con.sql("SHOW TABLES" + self._from(database)).fetchall()]
        return self._filter_with_like(names, like)

    def list_views(self, *, like=None, database=None):
        names = [r[0] for r in self.con.sql("SHOW VIEWS" + self._from(database)).fetchall()]
        return self._filter_with_like(names, like)

    # ---- catalogs and databases (Flink's: docs/sql.md) ----

    def _where(self, catalog, database):
        """(catalog, database) of Ibis's arguments: `database` as "db",
        "catalog.db" or ("catalog", "db"); None for the current ones."""
        if database is None:
            if catalog is not None:
                raise com.IbisInputError(
                    "dipper: catalog=%r without a database: name both, "
                    "database=(%r, 'db')" % (catalog, catalog))
            return None, None
        cat, db = self._to_catalog_db_tuple(self._to_sqlglot_table(database))
        if catalog is not None:
            if cat is not None and cat != catalog:
                raise com.IbisInputError("dipper: two catalogs given: %r and %r" % (cat, catalog))
            cat = catalog
        return cat, db

    def _name(self, name, catalog=None, database=None):
        """The quoted name of a table or view, qualified when a database is
        named."""
        cat, db = self._where(catalog, database)
        return _dotted(cat, db, name)

    def _from(self, database):
        cat, db = self._where(None, database)
        return "" if db is None else " FROM " + _dotted(cat, db)

    def _first(self, sql):
        return self.con.sql(sql).fetchall()[0][0]

    @property
    def current_catalog(self):
        """The session's catalog (SHOW CURRENT CATALOG): default_catalog to
        begin with."""
        return self._first("SHOW CURRENT CATALOG")

    @property
    def current_database(self):
        """The session's database (SHOW CURRENT DATABASE): default_database
        to begin with."""
        return self._first("SHOW CURRENT DATABASE")

    def list_catalogs(self, *, like=None):
        return self._filter_with_like([r[0] for r in self.con.sql("SHOW CATALOGS").fetchall()],
                                      like)

    def create_catalog(self, name, /, *, force=False):
        """CREATE CATALOG name: a catalog of the session (generic_in_memory,
        as Flink's in-memory catalog), holding the database `default`."""
        self.con.sql("CREATE CATALOG %s%s WITH ('type' = 'generic_in_memory')" %
                     ("IF NOT EXISTS " if force else "", _q(name)))

    def drop_catalog(self, name, /, *, force=False):
        self.con.sql("DROP CATALOG %s%s" % ("IF EXISTS " if force else "", _q(name)))

    def list_databases(self, *, like=None, catalog=None):
        """The databases of the current catalog or of `catalog` (SHOW
        DATABASES)."""
        sql = "SHOW DATABASES" + ("" if catalog is None else " FROM " + _q(catalog))
        return self._filter_with_like([r[0] for r in self.con.sql(sql).fetchall()], like)

    def create_database(self, name, /, *, catalog=None, force=False):
        """CREATE DATABASE [IF NOT EXISTS] [catalog.]name."""
        self.con.sql("CREATE DATABASE %s%s" % ("IF NOT EXISTS " if force else "",
                                               _dotted(catalog, name)))

    def drop_database(self, name, /, *, catalog=None, force=False, cascade=False):
        """DROP DATABASE [IF EXISTS] [catalog.]name; one that holds tables or
        views only with cascade=True (Flink's RESTRICT default)."""
        self.con.sql("DROP DATABASE %s%s%s" % ("IF EXISTS " if force else "",
                                               _dotted(catalog, name),
                                               " CASCADE" if cascade else ""))

    def use(self, database, /):
        """USE: make `database` ("db", "catalog.db" or ("catalog", "db"))
        the current one, where unqualified names are looked up."""
        cat, db = self._where(None, database)
        self.con.sql("USE " + _dotted(cat, db))

    def compile(self, expr, /, *, limit=None, params=None, pretty=False, **_):
        return super().compile(expr, limit=limit, params=params, pretty=pretty)

    # ---- Python UDFs (udfs.py) ----

    def _register_udfs(self, expr):
        """Ibis's pre-execute hook: the expression's @ibis.udf.scalar.pyarrow
        / .python / .pandas functions as dipper Python functions of the
        connection (embedded engine)."""
        _udfs.register(self, expr)

    # ---- in-memory tables ----

    def _create_memory_table(self, name, schema, data, watermark=None, temp=False,
                             primary_key=None):
        if schema.null_fields:
            raise com.IbisTypeError("dipper: columns of the NULL type cannot be stored: %s" %
                                    (schema.null_fields,))
        props = {"connector": "memory", "bounded": "true"}
        self.con.sql(self._create_sql(name, schema, props, watermark, primary_key, temp))
        if data is not None and data.num_rows:
            self.con.push(name, data)

    def _register_in_memory_table(self, op):
        self._create_memory_table(op.name, op.schema, op.data.to_pyarrow(op.schema))

    def _make_memtable_finalizer(self, name):
        def drop(con=self.con):  # Ibis ignores its errors (a closed connection)
            con.sql("DROP TABLE IF EXISTS %s" % _q(name))
        return drop

    # ---- running ----

    def _fetch(self, expr, params, limit):
        self._run_pre_execute_hooks(expr)
        table = expr.as_table()
        sql = self.compile(table, params=params, limit=limit)
        try:
            result = self.con.sql(sql)
            return table, result
        except dipper.StreamingError as e:
            raise self._streaming_hint(e)

    def _streaming_hint(self, e):
        if "dipper_query_start" in str(e) or "unbounded" in str(e):
            e.args = (e.args[0] + "\n(from Ibis: execute and to_pyarrow read bounded inputs; "
                      "start a streaming query with con.insert(table, expr) or "
                      "con.to_kafka(expr, ...), which give its handle)",)
        return e

    def to_pyarrow(self, expr, /, *, params=None, limit=None, **kwargs):
        """The result as a pyarrow Table (the rows of bounded inputs)."""
        from ibis.formats.pyarrow import PyArrowData

        table, result = self._fetch(expr, params, limit)
        try:
            arrow = result.arrow()
        except dipper.StreamingError as e:
            raise self._streaming_hint(e)
        arrow = PyArrowData.convert_table(arrow.rename_columns(table.columns), table.schema())
        return expr.__pyarrow_result__(arrow)

    def to_pyarrow_batches(self, expr, /, *, params=None, limit=None, chunk_size=1_000_000,
                           **kwargs):
        """The result as a pyarrow.RecordBatchReader over dipper's batches."""
        from ibis.formats.pyarrow import PyArrowData

        table, result = self._fetch(expr, params, limit)
        schema = table.schema()
        target = schema.to_pyarrow()
        try:
            reader = result.record_batch_reader()
        except dipper.StreamingError as e:
            raise self._streaming_hint(e)

        def batches():
            with reader:
                for b in reader:
                    t = pa.Table.from_batches([b]).rename_columns(table.columns)
                    yield from PyArrowData.convert_table(t, schema).to_batches(chunk_size)
        return pa.RecordBatchReader.from_batches(target, batches())

    def execute(self, expr, /, *, params=None, limit=None, **kwargs):
        """The result as a pandas DataFrame, Series or scalar."""
        from ibis.formats.pandas import PandasData

        t = self.to_pyarrow(expr.as_table(), params=params, limit=limit)
        df = PandasData.convert_table(t.to_pandas(), expr.as_table().schema())
        return expr.__pandas_result__(df)

    # ---- tables and views ----

    def _create_sql(self, name, schema, props, watermark=None, primary_key=None, temp=False,
                    qualified=None):
        cols = ["%s %s" % (_q(n), _types.to_sql(t)) for n, t in schema.items()]
        if watermark is not None:
            col = watermark.time_col
            if col not in schema:
                raise com.IbisInputError("dipper: the watermark's column %r is not a column of "
                                         "the table (%s)" % (col, ", ".join(schema.names)))
            strategy = _q(col)
            if watermark.allowed_delay is not None:
                strategy += " - " + interval_sql(watermark.allowed_delay)
            cols.append("WATERMARK FOR %s AS %s" % (_q(col), strategy))
        keys = util.promote_list(primary_key) if primary_key is not None else []
        if keys:
            missing = [k for k in keys if k not in schema]
            if missing:
                raise com.IbisInputError("dipper: primary key columns %s are not in the schema" %
                                         missing)
            cols.append("PRIMARY KEY (%s) NOT ENFORCED" % ", ".join(_q(k) for k in keys))
        return "CREATE %sTABLE %s (%s) WITH (%s)" % (
            "TEMPORARY " if temp else "", qualified or _q(name), ", ".join(cols),
            _options_sql(props))

    def create_table(self, name, /, obj=None, *, schema=None, database=None, catalog=None,
                     tbl_properties=None, watermark=None, primary_key=None, temp=False,
                     overwrite=False):
        """Declare a table (Ibis's Flink backend's signature).

        With `schema` and `tbl_properties` (the connector options, e.g.
        {"connector": "kafka", "topic": ..., "format": "json", ...}): a
        table over that connector, with `watermark`
        (ibis.watermark(col, ibis.interval(seconds=10))) and `primary_key`.
        With in-memory data as `obj` (pandas, pyarrow, a memtable): a memory
        table holding it, bounded, with the watermark if one is given.  With
        an Ibis expression as `obj`: in batch mode the table is created with
        the expression's columns and the rows inserted (over a connector
        when tbl_properties is given, else into a memory table).
        """
        if obj is None and schema is None:
            raise com.IbisError("`schema` or `obj` is required")
        qualified = self._name(name, catalog, database)
        if overwrite:
            self.drop_table(name, force=True, temp=temp, catalog=catalog, database=database)
        if obj is not None and not isinstance(obj, ir.Table):
            obj = ibis.memtable(obj, schema=schema)
        in_memory = obj is not None and not tbl_properties and (
            isinstance(obj.op(), ops.InMemoryTable) or self._mode == "batch")
        if in_memory and database is not None:
            raise com.IbisInputError(
                "dipper: rows from Python go into a memory table of the current database "
                "(its rows are pushed by the bare name): leave database= out, or give "
                "tbl_properties with a connector, or con.use(%r) first" % (database,))
        if obj is not None and isinstance(obj.op(), ops.InMemoryTable) and not tbl_properties:
            op = obj.op()
            self._create_memory_table(name, op.schema, op.data.to_pyarrow(op.schema),
                                      watermark=watermark, temp=temp, primary_key=primary_key)
            return self.table(name)
        if obj is not None:
            if self._mode == "streaming":
                raise com.IbisError(
                    "dipper: create_table from an expression runs it to the end, which needs "
                    "batch mode; in streaming mode create the table with a schema and start "
                    "con.insert(name, expr)")
            schema = schema or obj.schema()
            if not tbl_properties:
                self._run_pre_execute_hooks(obj)
                data = self.to_pyarrow(obj)
                self._create_memory_table(name, schema, data, watermark=watermark, temp=temp,
                                          primary_key=primary_key)
                return self.table(name)
        if not tbl_properties or not tbl_properties.get("connector"):
            raise com.IbisError("dipper: a table with a schema needs `tbl_properties` with its "
                                "'connector' (e.g. {'connector': 'kafka', ...})")
        self.con.sql(self._create_sql(name, sch.schema(schema), tbl_properties, watermark,
                                      primary_key, temp, qualified))
        if obj is not None:
            self.insert(name, obj, catalog=catalog, database=database)
        return self.table(name, database=self._database_arg(catalog, database))

    @staticmethod
    def _database_arg(catalog, database):
        if catalog is not None and isinstance(database, str):
            return (catalog, database)
        return database

    def drop_table(self, name, /, *, database=None, catalog=None, temp=False, force=False):
        self.con.sql("DROP %sTABLE %s%s" % ("TEMPORARY " if temp else "",
                                            "IF EXISTS " if force else "",
                                            self._name(name, catalog, database)))

    def create_view(self, name, /, obj, *, database=None, catalog=None, overwrite=False,
                    temp=False, **kwargs):
        """CREATE [OR REPLACE] [TEMPORARY] VIEW name AS <the expression>."""
        if not isinstance(obj, ir.Table):
            obj = ibis.memtable(obj)
        self._run_pre_execute_hooks(obj)
        self.con.sql("CREATE %s%sVIEW %s AS %s" % ("OR REPLACE " if overwrite else "",
                                                   "TEMPORARY " if temp else "",
                                                   self._name(name, catalog, database),
                                                   self.compile(obj)))
        return self.table(name, database=self._database_arg(catalog, database))

    def drop_view(self, name, /, *, database=None, catalog=None, temp=False, force=False):
        self.con.sql("DROP %sVIEW %s%s" % ("TEMPORARY " if temp else "",
                                           "IF EXISTS " if force else "",
                                           self._name(name, catalog, database)))

    def insert(self, name, /, obj, *, database=None, catalog=None, overwrite=False):
        """INSERT INTO name the rows of `obj` (an Ibis expression, or data:
        pandas, pyarrow, a dict of columns, a list of dicts).  Batch mode:
        runs to completion, gives None.  Streaming mode: starts the query
        and gives its dipper.Query (await_termination, last_progress, stop).
        Data (and an ibis.memtable) with the table's column names is cast
        to the table's types (Python's ints are BIGINT, an INT column takes
        them); an expression keeps its own types, as in SQL."""
        if isinstance(obj, dict):
            obj = pa.table(obj)
        elif isinstance(obj, list):
            obj = pa.Table.from_pylist(obj)
        if not isinstance(obj, ir.Table):
            obj = ibis.memtable(obj)
        if isinstance(obj.op(), ops.InMemoryTable):
            target = self.get_schema(name, catalog=catalog, database=database)
            if set(obj.columns) == set(target.names):
                obj = obj.select(*target.names).cast(target)
        self._run_pre_execute_hooks(obj)
        return self._run("INSERT %s %s %s" % ("OVERWRITE" if overwrite else "INTO",
                                              self._name(name, catalog, database),
                                              self.compile(obj)))

    # ---- sources and sinks ----

    def read_kafka(self, topic=None, /, *, schema, table_name=None, watermark=None,
                   bootstrap_servers=None, format="json", bounded=None, options=None):
        """A Kafka topic as a table: its messages parsed with `format` (json,
        csv, avro, raw) into the columns of `schema`.  `options` are the
        kafka connector's (docs/sql.md), overriding the rest; the reading
        starts at the earliest offset unless 'scan.startup.mode' says.
        `bounded=True` ends the input at the offsets of when the query
        starts ('scan.bounded.mode' = 'latest-offset'), the default in
        batch mode."""
        props = {"connector": "kafka", "format": format,
                 "scan.startup.mode": "earliest-offset"}
        if topic is not None:
            props["topic"] = topic
        if bootstrap_servers is not None:
            props["properties.bootstrap.servers"] = bootstrap_servers
        if bounded is None:
            bounded = self._mode == "batch"
        if bounded:
            props["scan.bounded.mode"] = "latest-offset"
        props.update(options or {})
        if "value.format" in (options or {}) and "format" not in (options or {}):
            del props["format"]  # the connector takes one of the two
        table_name = table_name or util.gen_name("read_kafka")
        return self.create_table(table_name, schema=schema, tbl_properties=props,
                                 watermark=watermark)

    def to_kafka(self, expr, /, topic=None, *, bootstrap_servers=None, format="json",
                 table_name=None, options=None, params=None, limit=None):
        """Write the rows of `expr` to a Kafka topic (a sink table over the
        kafka connector, named `table_name` or generated, with the
        expression's columns; `options` as in read_kafka).  Streaming mode:
        gives the started query's dipper.Query; batch mode: runs it, None."""
        props = {"connector": "kafka", "format": format}
        if topic is not None:
            props["topic"] = topic
        if bootstrap_servers is not None:
            props["properties.bootstrap.servers"] = bootstrap_servers
        props.update(options or {})
        table_name = table_name or util.gen_name("to_kafka")
        self._run_pre_execute_hooks(expr)
        self.con.sql(self._create_sql(table_name, expr.as_table().schema(), props))
        return self._run("INSERT INTO %s %s" % (_q(table_name),
                                                self.compile(expr, params=params, limit=limit)))

    def _read_file(self, fmt, path, schema, table_name, watermark, options, extra=None):
        path = os.fspath(path)
        if schema is None:
            schema = self._infer_file_schema(fmt, path, extra)
        props = {"connector": "filesystem", "path": path, "format": fmt}
        props.update(extra or {})
        props.update(options or {})
        table_name = table_name or util.gen_name("read_" + fmt)
        return self.create_table(table_name, schema=schema, tbl_properties=props,
                                 watermark=watermark)

    @staticmethod
    def _infer_file_schema(fmt, path, extra):
        p = Path(path)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise com.IbisInputError("dipper: read_%s of the empty folder %s needs `schema`"
                                         % (fmt, path))
            p = files[0]
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return sch.Schema.from_pyarrow(pq.read_schema(p))
        if fmt == "csv":
            import pyarrow.csv as pcsv
            if (extra or {}).get("csv.header") != "true":
                raise com.IbisInputError("dipper: read_csv without a header line needs `schema`")
            with pcsv.open_csv(p) as r:
                return sch.Schema.from_pyarrow(r.schema)
        import pyarrow.json as pjson
        return sch.Schema.from_pyarrow(pjson.read_json(p).schema)

    def read_parquet(self, path, /, *, schema=None, table_name=None, watermark=None,
                     options=None, **kwargs):
        """Parquet files as a table: a file, a folder (every file in it,
        as pyarrow.dataset reads a folder), a glob ("data/*.parquet") or a
        list of files; the schema is the files' unless given.

        On the embedded engine pyarrow reads the files here, in Python
        (the C library has no Parquet reader): the rows go into a bounded
        memory table, pushed one record batch at a time, so the table is
        a bounded input in batch mode and a bounded side in streaming
        mode; `kwargs` go to pyarrow.dataset.dataset (partitioning="hive",
        ...).  On Spark the table is a `filesystem` table that Spark reads
        (`options` are that connector's, e.g. a folder watched for new
        files in streaming mode)."""
        if self.engine != "embedded":
            if kwargs:
                raise com.IbisInputError(
                    "dipper: read_parquet on Spark declares a filesystem table that Spark reads; "
                    "%s are pyarrow's arguments, for the embedded engine: give `options`"
                    % ", ".join(sorted(kwargs)))
            return self._read_file("parquet", path, schema, table_name, watermark, options)
        if options:
            raise com.IbisInputError(
                "dipper: read_parquet on the embedded engine reads the files with pyarrow into a "
                "memory table, so the filesystem connector's `options` do not apply; give "
                "pyarrow.dataset.dataset's arguments as keywords (partitioning='hive')")
        dataset = _parquet_dataset(path, kwargs)
        if schema is None:
            if not dataset.schema.names:
                raise com.IbisInputError("dipper: read_parquet(%r): no Parquet files there to "
                                         "read the schema from; give `schema`" % (path,))
            schema = sch.Schema.from_pyarrow(dataset.schema)
        else:
            schema = sch.schema(schema)
            missing = [n for n in schema.names if n not in dataset.schema.names]
            if missing and dataset.schema.names:
                raise com.IbisInputError("dipper: read_parquet(%r): the files have no column %s "
                                         "(they have %s)" % (path, ", ".join(missing),
                                                             ", ".join(dataset.schema.names)))
        table_name = table_name or util.gen_name("read_parquet")
        self._create_memory_table(table_name, schema, None, watermark=watermark)
        if dataset.schema.names:
            for batch in dataset.to_batches(columns=list(schema.names)):
                if batch.num_rows:
                    self.con.push(table_name, batch)
        return self.table(table_name)

    def read_csv(self, path, /, *, schema=None, table_name=None, watermark=None, header=True,
                 options=None):
        """CSV files as a table; with `header` (the default) the first line
        of each file names the columns and, without `schema`, pyarrow infers
        the types from the (first) file."""
        extra = {"csv.header": "true"} if header else {}
        return self._read_file("csv", path, schema, table_name, watermark, options, extra)

    def read_json(self, path, /, *, schema=None, table_name=None, watermark=None,
                  options=None):
        """JSON lines files as a table (schema inferred by pyarrow unless
        given)."""
        return self._read_file("json", path, schema, table_name, watermark, options)
