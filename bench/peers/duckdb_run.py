#!/usr/bin/env python3
"""bench/peers/duckdb_run.py SPEC.json — one batch query on DuckDB, in a
process of its own (bench/peers/peers.py times it with GNU time), over the
same JSON lines files the other engines read.

The spec names the query, its setup (the Flink SQL of tests/flink/nexmark/ or
bench/peers/seed.sql), the query, the input folders by table and DuckDB's
threads.  The input tables become views over read_json with the DDL's column
types (Nexmark's computed `dateTime` as the same CASE); the setup's other
statements and the query are run as written, backquotes made double quotes
(DuckDB's identifier quotes), nothing else rewritten: a query DuckDB cannot
express (a TUMBLE or HOP table function, PROCTIME, ...) fails with DuckDB's
own error and exit 1.  The seed pipeline's HOP windows, which DuckDB has no
function for, are written out by hand below (SEED_QUERY): each payment in
the two 1-minute windows that start at the 30-s boundaries at or before it.
The answer is materialized (CREATE TABLE AS); printed: its row count, the
wall and the process's CPU seconds (every thread's) of the statements alone.
"""
import json
import re
import sys
import time

import duckdb

NEXMARK = """
CREATE VIEW datagen AS
SELECT *, CASE WHEN event_type = 0 THEN person.dateTime
               WHEN event_type = 1 THEN auction.dateTime
               ELSE bid.dateTime END AS dateTime
FROM read_json('%s/*', format = 'newline_delimited', timestampformat = '%%Y-%%m-%%d %%H:%%M:%%S.%%g',
  columns = {
    event_type: 'INTEGER',
    person: 'STRUCT(id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR,
                    state VARCHAR, dateTime TIMESTAMP, extra VARCHAR)',
    auction: 'STRUCT(id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
                     dateTime TIMESTAMP, expires TIMESTAMP, seller BIGINT, category BIGINT, extra VARCHAR)',
    bid: 'STRUCT(auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
                 dateTime TIMESTAMP, extra VARCHAR)'})
"""

PAYMENTS = """
CREATE VIEW payment_msg AS
SELECT * FROM read_json('%s/*', format = 'newline_delimited', timestampformat = '%%Y-%%m-%%d %%H:%%M:%%S.%%g',
  columns = {createTime: 'TIMESTAMP', orderId: 'BIGINT', payAmount: 'DOUBLE', payPlatform: 'INTEGER',
             provinceId: 'INTEGER'})
"""

# HOP(30 s slide, 1 min size): the windows [s, s + 1 min) with s a multiple
# of 30 s in (createTime - 1 min, createTime].
SEED_QUERY = """
SELECT provinceId, window_start, window_start + INTERVAL 1 MINUTE AS window_end, SUM(payAmount)
FROM (SELECT provinceId, payAmount,
             UNNEST([time_bucket(INTERVAL 30 SECOND, createTime),
                     time_bucket(INTERVAL 30 SECOND, createTime) - INTERVAL 30 SECOND]) AS window_start
      FROM payment_msg)
GROUP BY provinceId, window_start
"""


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    con = duckdb.connect()
    con.execute("SET threads = %d" % spec["threads"])
    stmts = []
    for table, folder in spec["files"].items():
        stmts.append((NEXMARK if table == "datagen" else PAYMENTS) % folder)
    setup = spec["setup"]
    # Drop the input tables' CREATE TABLE statements (replaced above).
    parts = [s.strip() for s in split(setup) if s.strip()]
    for s in parts:
        m = re.match(r"CREATE\s+TABLE\s+`?(\w+)`?", s, re.I)
        if m and m.group(1) in spec["files"]:
            continue
        stmts.append(s.replace("`", '"'))
    query = SEED_QUERY if spec["name"] == "seed" else spec["query"].replace("`", '"')
    c0, t0 = time.process_time(), time.time()
    for s in stmts:
        con.execute(s)
    con.execute("CREATE TABLE peers_out AS " + query)
    wall, cpu = time.time() - t0, time.process_time() - c0
    rows = con.execute("SELECT COUNT(*) FROM peers_out").fetchone()[0]
    print(rows, "%.3f" % wall, "%.3f" % cpu)


def split(sql):
    """Statements at ';' outside quotes ('--' comments dropped)."""
    out, cur, quote, i = [], [], None, 0
    while i < len(sql):
        c = sql[i]
        if quote:
            cur.append(c)
            if c == quote:
                quote = None
        elif c in "'`\"":
            quote = c
            cur.append(c)
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = len(sql) if j < 0 else j
            continue
        elif c == ";":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


if __name__ == "__main__":
    try:
        main()
    except duckdb.Error as e:
        print("duckdb: %s" % str(e).splitlines()[0], file=sys.stderr)
        sys.exit(1)
