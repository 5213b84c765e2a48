/*
** jar.h — what kind of Java function a class of a jar is, read from the jar
** itself: a zip archive's central directory, the class file's entry (stored or
** deflated), and the class file's constant pool, super class and interfaces.
**
** Why: Flink's CREATE FUNCTION f AS 'class' USING JAR '..' says nothing of
** whether f is a scalar function or an aggregate, and dipper's binder must
** know before any server is asked (an aggregate groups; a scalar does not).
** Spark Connect registers a JavaUDF from its class name, as a scalar
** (registerJava: the class implements one of UDF0 .. UDF22) or, with the
** JavaUDF's `aggregate` flag, as an aggregate (registerJavaUDAF: the class
** extends UserDefinedAggregateFunction; an Aggregator is refused by the
** server).  So the class file answers: its supers and interfaces are followed
** through the jar's own classes until one of Spark's types is met.
**
** The decoder does no I/O and trusts no length field (each is checked against
** the bytes there are): the jar is the user's file.  dp_jar_file_kind reads a
** file and decodes it.
**
** Owns: the decoding.  Does not own: what the catalog does with the answer
** (plan/catalog_func.c), the upload and registration (spark/udf.h).
*/
#ifndef DP_SPARK_JAR_H
#define DP_SPARK_JAR_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef enum dp_java_kind {
  DP_JAVA_UNKNOWN,    /* in the jar, but none of Spark's types is reached through the jar's classes */
  DP_JAVA_ABSENT,     /* the class is not in the jar */
  DP_JAVA_SCALAR,     /* implements org.apache.spark.sql.api.java.UDFn */
  DP_JAVA_UDAF,       /* extends org.apache.spark.sql.expressions.UserDefinedAggregateFunction */
  DP_JAVA_AGGREGATOR, /* extends org.apache.spark.sql.expressions.Aggregator */
} dp_java_kind;

/* The kind of class `class_name` (dotted: "com.example.F") in the jar
** jar[0..n).  DIPPER_OK with *kind set; DIPPER_DATA with `why` saying what is
** broken (not a zip, a truncated entry, a class file that is not one);
** DIPPER_UNSUPPORTED for a zip feature the reader has not (ZIP64, a method
** other than stored and deflate, an encrypted entry). */
int dp_jar_class_kind(const uint8_t *jar, size_t n, const char *class_name, dp_java_kind *kind,
                      dp_buf *why);

/* The same for the jar file at path: DIPPER_IO when it cannot be read. */
int dp_jar_file_kind(const char *path, const char *class_name, dp_java_kind *kind, dp_buf *why);

#endif /* DP_SPARK_JAR_H */
