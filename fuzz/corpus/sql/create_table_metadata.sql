CREATE TABLE k (v STRING, `offset` BIGINT METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', part INT METADATA FROM 'partition' VIRTUAL) WITH ('connector'='kafka');
