-- joins.sql — the three joins of a streaming shop:
--   1. stream-stream interval join: a shipment within 4 hours of its order
--      (both sides have watermarks, so the join state is dropped as time passes);
--   2. stream-static join: orders enriched from the product catalog, a topic
--      read once up to its latest offset when the query starts ('scan.bounded.mode'),
--      so that side is bounded: it is kept whole and the order rows are not
--      (EXPLAIN: state=bounded-input).  A source the query keeps reading — a
--      filesystem table in streaming mode watches its folder for new files —
--      would make it a regular stream-stream join that keeps every row of both
--      sides forever;
--   3. temporal join: each order priced at the exchange rate valid at its time.

CREATE TABLE orders (
  order_id   BIGINT,
  product_id BIGINT,
  currency   STRING,
  amount     DECIMAL(10, 2),
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE shipments (
  shipment_id BIGINT,
  order_id    BIGINT,
  ship_time   TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'shipments',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE products (
  product_id BIGINT,
  name       STRING,
  category   STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'products',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE rates (
  currency    STRING,
  rate        DECIMAL(10, 4),
  update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time - INTERVAL '5' SECOND,
  PRIMARY KEY (currency) NOT ENFORCED
) WITH (
  'connector' = 'kafka',
  'topic' = 'rates',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE shipped_in_time (order_id BIGINT, order_time TIMESTAMP(3), ship_time TIMESTAMP(3))
  WITH ('connector' = 'console');
CREATE TABLE orders_by_product (order_id BIGINT, name STRING, category STRING, amount DECIMAL(10, 2))
  WITH ('connector' = 'console');
CREATE TABLE orders_in_eur (order_id BIGINT, amount_eur DECIMAL(20, 6), order_time TIMESTAMP(3))
  WITH ('connector' = 'console');

-- 1. Interval join.
INSERT INTO shipped_in_time
SELECT o.order_id, o.order_time, s.ship_time
FROM orders o, shipments s
WHERE o.order_id = s.order_id
  AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '4' HOUR;

-- 2. Stream-static join.
INSERT INTO orders_by_product
SELECT o.order_id, p.name, p.category, o.amount
FROM orders o
JOIN products p ON o.product_id = p.product_id;

-- 3. Temporal join against the versioned rates table.
INSERT INTO orders_in_eur
SELECT o.order_id, o.amount * r.rate, o.order_time
FROM orders o
JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
  ON o.currency = r.currency;
