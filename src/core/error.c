/*
** error.c — the text of each result code and the library version.
**
** The strings come from the DIPPER_CODES list in dipper.h, so a code and its
** text are written down exactly once.
*/
#include "dipper.h"

#define DP_CODE_TEXT_(name, num, str) [num] = str,
static const char *const code_text[] = {DIPPER_CODES(DP_CODE_TEXT_)};
#undef DP_CODE_TEXT_

const char *dipper_strerror(int code) {
  if (code < 0 || (unsigned)code >= sizeof code_text / sizeof code_text[0] || !code_text[code])
    return "unknown error";
  return code_text[code];
}

const char *dipper_version(void) { return DIPPER_VERSION; }
