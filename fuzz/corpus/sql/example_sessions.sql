-- sessions.sql — user sessions that close after 5 minutes without a click,
-- written twice: Flink's SESSION window TVF and Spark's session_window().
-- Both spellings compile to the same Window + Aggregate plan.

CREATE TABLE clicks (
  user_id    BIGINT,
  url        STRING,
  click_time TIMESTAMP(3),
  WATERMARK FOR click_time AS click_time - INTERVAL '30' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE sessions (
  user_id       BIGINT,
  session_start TIMESTAMP(3),
  session_end   TIMESTAMP(3),
  clicks        BIGINT
) WITH (
  'connector' = 'console'
);

-- Flink: the session window table-valued function, partitioned per user.
INSERT INTO sessions
SELECT user_id, window_start, window_end, COUNT(*)
FROM TABLE(
  SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(click_time), INTERVAL '5' MINUTE))
GROUP BY user_id, window_start, window_end;

-- Spark: session_window() in GROUP BY, the gap as a duration string.
INSERT INTO sessions
SELECT user_id, session_window.start, session_window.end, COUNT(*)
FROM clicks
GROUP BY user_id, session_window(click_time, '5 minutes');
