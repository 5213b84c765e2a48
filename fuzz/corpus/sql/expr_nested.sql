SELECT a.b.c, m['k'], arr[1], f(x).field, ROW(1, 'a'), (1, 2), ARRAY[1, 2], MAP['a', 1], (SELECT max(x) FROM u) FROM t;
