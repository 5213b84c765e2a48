CREATE TEMPORARY TABLE IF NOT EXISTS c.d.t (x INT) WITH ('connector'='memory') LIKE base;
