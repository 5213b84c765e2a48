-- orders_spark.sql — a batch report that runs the same on the embedded engine
-- and on Spark (dipper run --engine sc://127.0.0.1:15002 orders_spark.sql, from
-- this directory: relative paths are resolved against it on both engines).
-- Orders (CSV) joined to customers (JSON lines), both with a declared schema;
-- revenue per region, and the large orders with their customer's name.
-- Order 1009's customer 6 has no row in customers: the inner joins drop it.

SET 'execution.runtime-mode' = 'batch';

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id INT,
  amount      DECIMAL(10, 2),
  ordered_at  TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'data/orders.csv',
  'format' = 'csv'
);

CREATE TABLE customers (
  customer_id INT,
  name        STRING,
  region      STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'data/customers.json',
  'format' = 'json'
);

-- revenue per region, largest first
SELECT c.region, COUNT(*) AS orders, SUM(o.amount) AS revenue, MAX(o.ordered_at) AS last_order
FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id
GROUP BY c.region
ORDER BY revenue DESC;

-- orders of 100 or more, with who placed them
SELECT o.order_id, c.name, o.amount
FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id
WHERE o.amount >= 100
ORDER BY o.order_id;
