-- batch_report.sql — a daily report in batch mode: the same language, run to
-- completion over files.  Sales (CSV) joined to stores (JSON), revenue and
-- order count per region and day, largest first.

SET 'execution.runtime-mode' = 'batch';

CREATE TABLE sales (
  sale_id   BIGINT,
  store_id  INT,
  amount    DECIMAL(12, 2),
  sold_at   TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'data/sales/',
  'format' = 'csv'
);

CREATE TABLE stores (
  store_id INT,
  region   STRING,
  city     STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'data/stores.json',
  'format' = 'json'
);

CREATE TABLE region_report (
  region   STRING,
  sale_day DATE,
  orders   BIGINT,
  revenue  DECIMAL(22, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'out/region_report/',
  'format' = 'csv'
);

INSERT INTO region_report
SELECT st.region, CAST(s.sold_at AS DATE) AS sale_day, COUNT(*) AS orders, SUM(s.amount) AS revenue
FROM sales s
JOIN stores st ON s.store_id = st.store_id
WHERE s.amount > 0
GROUP BY st.region, CAST(s.sold_at AS DATE)
ORDER BY revenue DESC;
