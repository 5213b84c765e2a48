/*
** tzone.h — time zones named as Java's java.util.TimeZone names them, for
** Flink's CONVERT_TZ: a region of the system's tz database ('Europe/Berlin',
** read from $TZDIR or /usr/share/zoneinfo), one of Java's three-letter IDs
** ('PST' is America/Los_Angeles, 'EST' a fixed -05:00, ...), or a custom
** 'GMT+h', 'GMT+hh:mm', 'GMT+hhmm'.  A name that is none of these is GMT, as
** in Java (TimeZone.getTimeZone never fails).  Names are case-sensitive.
**
** Offsets are read from the zone file's transitions (64-bit data of TZif
** version 2 and later); after the last transition, from the POSIX TZ rule
** of the file's footer ("CET-1CEST,M3.5.0,M10.5.0/3"), so that "slim"
** files, which stop at the last change of rules, answer as "fat" ones.
*/
#ifndef DP_TZONE_H
#define DP_TZONE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dp_tz dp_tz;

/* The zone called name[0..len), into *out (never NULL on success: GMT for an
** unknown name).  DIPPER_OK or DIPPER_NOMEM.  Free with dp_tz_free. */
int dp_tz_open(const char *name, size_t len, dp_tz **out);
void dp_tz_free(dp_tz *z);

/* Seconds east of UTC at the instant utc (seconds since the epoch). */
int64_t dp_tz_offset_utc(const dp_tz *z, int64_t utc);

/* Seconds east of UTC for the wall-clock time `wall` (local seconds since
** the epoch), as java.util.GregorianCalendar resolves it: a time in a gap
** (spring forward) takes the offset before the gap, a time that occurs
** twice (fall back) the offset after the change. */
int64_t dp_tz_offset_wall(const dp_tz *z, int64_t wall);

#endif
