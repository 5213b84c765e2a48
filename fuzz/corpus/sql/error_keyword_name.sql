SELECT order FROM t; CREATE TABLE t (select INT);
