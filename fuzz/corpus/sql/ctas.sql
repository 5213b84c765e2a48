CREATE TABLE s WITH ('connector' = 'blackhole') AS SELECT * FROM t;
