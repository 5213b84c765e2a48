-- q14 calculation: converted prices, the time of day, and count_char(extra, 'c').  The
-- published query calls a Java UDF count_char; here it is the same count written in SQL
-- (the length of extra less its length without 'c').
SELECT auction, bidder, 0.908 * price AS price,
  CASE
    WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
    WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
    ELSE 'otherTime'
  END AS bidTimeType,
  `dateTime`, extra,
  CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
