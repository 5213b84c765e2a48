-- The query of bench/python/ (execute_bench.c and arrow_bench.py): {rows}
-- rows of BIGINT, BIGINT and DOUBLE made by datagen, in batch mode.
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '{rows}');
SELECT id, id * 2 AS twice, CAST(id AS DOUBLE) / 4 AS quarter FROM g;
