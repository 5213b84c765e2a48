/*
** uuid.c — random UUIDs (see uuid.h).
*/
#include "spark/uuid.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"

int dp_uuid_v4(char out[DP_UUID_LEN + 1]) {
  uint8_t b[16];
  size_t got = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return DIPPER_IO;
  while (got < sizeof b) {
    ssize_t n = read(fd, b + got, sizeof b - got);
    if (n <= 0) {
      close(fd);
      return DIPPER_IO;
    }
    got += (size_t)n;
  }
  close(fd);
  b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
  b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  static const char hex[] = "0123456789abcdef";
  char *o = out;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *o++ = '-';
    *o++ = hex[b[i] >> 4];
    *o++ = hex[b[i] & 15];
  }
  *o = '\0';
  return DIPPER_OK;
}

int dp_uuid_valid(const char *s) {
  if (!s || strlen(s) != DP_UUID_LEN) return 0;
  for (int i = 0; i < DP_UUID_LEN; i++) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return 0;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return 0;
    }
  }
  return 1;
}
