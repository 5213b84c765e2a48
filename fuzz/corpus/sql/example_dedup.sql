-- dedup.sql — removing duplicates, in both modes.
--   Streaming: keep the first event of each event_id (ROW_NUMBER() ... = 1
--   compiles to a Deduplicate node, which keeps one row per event_id).
--   Batch: SELECT DISTINCT over files, after SET 'execution.runtime-mode'.

CREATE TABLE events (
  event_id   STRING,
  user_id    BIGINT,
  kind       STRING,
  event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE unique_events (event_id STRING, user_id BIGINT, kind STRING, event_time TIMESTAMP(3))
  WITH ('connector' = 'console');

INSERT INTO unique_events
SELECT event_id, user_id, kind, event_time
FROM (
  SELECT *,
         ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn
  FROM events)
WHERE rn = 1;

SET 'execution.runtime-mode' = 'batch';

CREATE TABLE event_archive (
  event_id   STRING,
  user_id    BIGINT,
  kind       STRING,
  event_time TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'data/events/',
  'format' = 'json'
);

CREATE TABLE user_kinds (user_id BIGINT, kind STRING)
  WITH ('connector' = 'filesystem', 'path' = 'out/user_kinds/', 'format' = 'json');

INSERT INTO user_kinds
SELECT DISTINCT user_id, kind FROM event_archive;
