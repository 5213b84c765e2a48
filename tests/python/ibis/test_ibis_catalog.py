# Catalogs and databases through the Ibis backend (dipper's Flink-style
# CREATE/DROP/USE DATABASE and CATALOG, SHOW DATABASES): Ibis's
# CanCreateDatabase and CanCreateCatalog, and `database=` on the table calls.
import pytest

import dipper
import ibis
import ibis.common.exceptions as com
from ibis import _

pytestmark = pytest.mark.ibis


def test_databases(con, tmp_path):
    assert con.current_catalog == "default_catalog"
    assert con.current_database == "default_database"
    assert con.list_databases() == ["default_database"]
    con.create_database("sales")
    with pytest.raises(dipper.DuplicateError):
        con.create_database("sales")
    con.create_database("sales", force=True)
    assert con.list_databases() == ["default_database", "sales"]
    assert con.list_databases(like="^sal") == ["sales"]
    # a table in it, named by database=
    t = con.create_table("orders", schema=ibis.schema({"k": "int32", "v": "float64"}),
                         tbl_properties={"connector": "filesystem", "format": "json",
                                         "path": str(tmp_path)}, database="sales")
    assert "orders" not in con.list_tables()
    assert con.list_tables(database="sales") == ["orders"]
    assert con.list_tables(database=("default_catalog", "sales")) == ["orders"]
    assert "`sales`.`orders`" in con.compile(t)
    assert con.insert("orders", ibis.memtable({"k": [1, 2], "v": [0.5, 1.5]}),
                      database="sales") is None
    assert con.table("orders", database="sales").v.sum().execute() == 2.0
    con.create_view("big", t.filter(_.v > 1), database="default_catalog.sales")
    assert con.list_views(database="sales") == ["big"]
    assert con.table("big", database="sales").count().execute() == 1
    with pytest.raises(com.TableNotFound):
        con.table("orders")  # not in the current database
    with pytest.raises(com.IbisInputError, match="memory table of the current database"):
        con.create_table("rows", ibis.memtable({"x": [1]}), database="sales")
    # a database that holds tables is dropped only with cascade
    with pytest.raises(dipper.Error, match="CASCADE"):
        con.drop_database("sales")
    con.drop_view("big", database="sales")
    con.drop_table("orders", database="sales")
    con.drop_database("sales")
    assert con.list_databases() == ["default_database"]
    con.drop_database("sales", force=True)
    with pytest.raises(dipper.NameError):
        con.drop_database("sales")


def test_use_cascade_and_catalogs(con):
    con.create_database("scratch")
    con.create_table("x", schema=ibis.schema({"a": "int32"}),
                     tbl_properties={"connector": "blackhole"}, database="scratch")
    con.use("scratch")
    assert con.current_database == "scratch" and con.list_tables() == ["x"]
    with pytest.raises(dipper.Error):
        con.drop_database("scratch", cascade=True)  # the current one
    con.use("default_database")
    con.drop_database("scratch", cascade=True)
    assert "scratch" not in con.list_databases()
    con.create_catalog("lab")
    assert con.list_catalogs() == ["default_catalog", "lab"]
    assert con.list_databases(catalog="lab") == ["default"]
    con.create_database("d2", catalog="lab")
    assert con.list_databases(catalog="lab") == ["d2", "default"]
    con.create_table("y", schema=ibis.schema({"a": "int32"}),
                     tbl_properties={"connector": "blackhole"}, database=("lab", "d2"))
    assert con.list_tables(database="lab.d2") == ["y"]
    assert con.get_schema("y", catalog="lab", database="d2") == ibis.schema({"a": "int32"})
    with pytest.raises(com.IbisInputError, match="without a database"):
        con.get_schema("y", catalog="lab")
    con.drop_database("d2", catalog="lab", cascade=True)
    con.drop_catalog("lab")
    assert con.list_catalogs() == ["default_catalog"]
    con.drop_catalog("lab", force=True)
