SELECT count(*) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' HOUR), window(ts, '1 minute', '30 seconds'), session_window(ts, '5 minutes');
