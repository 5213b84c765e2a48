CREATE TABLE t (a INT, b AS a * 2 COMMENT 'double', p AS PROCTIME()) COMMENT 'tbl' PARTITIONED BY (a) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
