/*
** spark_run.c — programs of a handle opened on Spark Connect ("sc://...").
**
** Owns: the handle's Spark session (opened lazily by the first call that
** runs something).  Does not own: the protocol (spark/client.c), the plan
** translation (spark/translate.c).
**
** The Spark Connect client is being built; until it lands, running on Spark
** is refused with a message that says so (compiling and checking work).
*/
#include <string.h>

#include "api/dipper_int.h"

const char *dp_spark_address_problem(const char *addr) { return dp_engine_address_problem(addr); }

void dp_spark_disconnect(dipper *db) { (void)db; }

int dp_spark_execute(dipper *db, const dipper_program *prog, const dp_program_stmt *ps, int stmt,
                     dp_api_result *res) {
  (void)prog;
  (void)ps;
  (void)stmt;
  (void)res;
  dp_span nowhere = {0, 0, 0, 0};
  return dp_error(&db->diags, DIPPER_UNSUPPORTED, nowhere,
                  "the Spark Connect backend is not built yet; run on the embedded engine "
                  "(no --engine, or SET 'dipper.engine' = 'embedded')");
}
