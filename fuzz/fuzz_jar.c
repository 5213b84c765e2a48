/*
** fuzz_jar.c — libFuzzer target for the jar reader (spark/jar.h): the input
** is a jar (a zip archive), asked for a few class names (one of the seed's
** aggregates, a scalar, one that is not there).  Besides "no crash, no leak,
** no undefined behaviour": an answer other than DIPPER_OK comes with a reason.
**
** The seeds in fuzz/corpus/jar/ are the jars of tests/spark/jar_test.c
** (`test_spark_jar_test --seeds fuzz/corpus/jar`).
*/
#include <stdint.h>
#include <stdlib.h>

#include "core/buf.h"
#include "dipper.h"
#include "spark/jar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"com.ex.Derived", "com.ex.Scalar", "com.ex.A", "x.Missing"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    dp_buf why = DP_BUF_INIT;
    dp_java_kind k;
    int rc = dp_jar_class_kind(data, size, names[i], &k, &why);
    if (rc != DIPPER_OK && rc != DIPPER_NOMEM && why.len == 0) abort();
    dp_buf_free(&why);
  }
  return 0;
}
