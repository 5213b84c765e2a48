-- The seed's payment pipeline: a Kafka stream of payments with an event-time
-- watermark, and the sinks its results go to.
CREATE TABLE payment_msg (
  createTime TIMESTAMP(3),
  orderId BIGINT,
  payAmount DOUBLE,
  payPlatform INT,
  provinceId INT,
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'payment_msg',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'dipper-test',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE province_totals (
  provinceId INT,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  total DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'province_totals',
  'properties.bootstrap.servers' = 'localhost:9092',
  'format' = 'json'
);

CREATE TABLE payments_out (
  provinceId INT,
  total DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/dipper-test/payments_out',
  'format' = 'json'
);
