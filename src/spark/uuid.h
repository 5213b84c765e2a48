/*
** uuid.h — random (version 4) UUIDs for Spark Connect session and operation
** ids, from the kernel's random source.
** Owns: formatting 16 random bytes as a canonical lowercase UUID.
** Does not own: any state; each call reads /dev/urandom afresh (no global
** file descriptor, and ids are made a few times per query, not per row).
*/
#ifndef DP_SPARK_UUID_H
#define DP_SPARK_UUID_H

#define DP_UUID_LEN 36 /* characters, without the NUL */

/* Writes "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" and a NUL into out.
** DIPPER_OK, or DIPPER_IO when /dev/urandom cannot be read. */
int dp_uuid_v4(char out[DP_UUID_LEN + 1]);

/* True when s is a UUID in canonical form (any version, either case). */
int dp_uuid_valid(const char *s);

#endif /* DP_SPARK_UUID_H */
