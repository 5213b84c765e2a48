SELECT timestamp, window, offset, value, key, partition, time, date, `order` FROM t window;
