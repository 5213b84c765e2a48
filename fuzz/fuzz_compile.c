/*
** fuzz_compile.c — libFuzzer target for the whole compile pipeline through
** the public API: dipper_open, dipper_compile (parse, bind, analyse,
** validate), dipper_explain, the diagnostics, dipper_close.
*/
#include <stdint.h>
#include <stdlib.h>

#include "dipper.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dipper *db = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK) return 0;
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, (const char *)data, size, "fuzz.sql", &prog);
  if (rc == DIPPER_OK) {
    if (!prog) abort();
    char *plan = NULL;
    if (dipper_explain(prog, DIPPER_EXPLAIN_DEFAULT, &plan) == DIPPER_OK) dipper_free(plan);
    dipper_program_free(prog);
  } else {
    if (prog) abort();
    int n = dipper_diag_count(db);
    if (n <= 0) abort();
    for (int i = 0; i < n; i++) {
      const dipper_diag *g = dipper_diag_get(db, i);
      if (!g || !g->message) abort();
      dipper_free(dipper_diag_render(db, i));
    }
  }
  dipper_close(db);
  return 0;
}
