-- q6 average selling price by seller: an OVER window over a Top-N of a join.
SELECT Q.seller,
       AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.`dateTime` ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
  FROM (SELECT A.id, A.seller, B.price, B.`dateTime`
        FROM auction AS A, bid AS B
        WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires)
  WHERE rownum <= 1
) AS Q;
