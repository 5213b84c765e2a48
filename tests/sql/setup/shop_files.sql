-- The tables of shop.sql, with files as the sources instead of Kafka topics:
-- a file source is bounded in batch mode, and watched (so unbounded) in
-- streaming mode because each sets 'source.monitor-interval' (without it a
-- filesystem table is bounded in streaming mode too, Flink's rule), so the
-- same queries run in both modes.  The sinks are the
-- same as in shop.sql.
CREATE TABLE orders (
  order_id BIGINT,
  customer_id BIGINT,
  product STRING,
  amount DECIMAL(10, 2),
  quantity INT,
  currency STRING,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/orders',
  'source.monitor-interval' = '1 s',
  'format' = 'json'
);

CREATE TABLE shipments (
  ship_id BIGINT,
  order_id BIGINT,
  carrier STRING,
  ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/shipments',
  'source.monitor-interval' = '1 s',
  'format' = 'json'
);

CREATE TABLE clicks (
  user_id BIGINT,
  url STRING,
  session_gap_s INT,
  click_time TIMESTAMP(3),
  proc AS PROCTIME(),
  WATERMARK FOR click_time AS click_time - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/clicks',
  'source.monitor-interval' = '1 s',
  'format' = 'json'
);

CREATE TABLE raw_events (
  id BIGINT,
  kind STRING,
  ts TIMESTAMP(3),
  payload STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/raw_events',
  'source.monitor-interval' = '1 s',
  'format' = 'json'
);

CREATE TABLE rates (
  currency STRING,
  rate DECIMAL(10, 4),
  update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time - INTERVAL '1' SECOND,
  PRIMARY KEY (currency) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/rates',
  'source.monitor-interval' = '1 s',
  'format' = 'json'
);

CREATE TABLE customers (
  customer_id BIGINT,
  name STRING,
  city STRING,
  tier INT
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '100'
);

CREATE TABLE order_totals (
  customer_id BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = 'order_totals',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);

CREATE TABLE order_events (
  order_id BIGINT,
  product STRING,
  amount DECIMAL(10, 2),
  order_time TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'order_events',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);

CREATE TABLE window_totals (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  product STRING,
  cnt BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/window_totals',
  'format' = 'json'
);

CREATE TABLE console_out (
  customer_id BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'console'
);

CREATE TABLE drain (
  order_id BIGINT,
  product STRING
) WITH (
  'connector' = 'blackhole'
);
