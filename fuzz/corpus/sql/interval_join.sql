SELECT * FROM a, b WHERE a.id = b.id AND a.ts BETWEEN b.ts - INTERVAL '4' HOUR AND b.ts;
