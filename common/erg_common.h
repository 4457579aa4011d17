// SPDX-License-Identifier: GPL-3.0-or-later
/* erg common library: logging, clocks, safe names, wire format, config helpers.
 * Shared by the agent, the collector and the CLI. */
#ifndef ERG_COMMON_H
#define ERG_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "erg.pb-c.h"

#define ERG_WIRE_VERSION 1

/* ---- logging (stderr, one line per event) ---- */
enum erg_log_level { ERG_LOG_ERR = 0, ERG_LOG_WARN, ERG_LOG_INFO, ERG_LOG_DEBUG };
void erg_log_init(const char *ident, int level);
int erg_log_level_parse(const char *s); /* -1 if unknown */
void erg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define erg_err(...) erg_log(ERG_LOG_ERR, __VA_ARGS__)
#define erg_warn(...) erg_log(ERG_LOG_WARN, __VA_ARGS__)
#define erg_info(...) erg_log(ERG_LOG_INFO, __VA_ARGS__)
#define erg_debug(...) erg_log(ERG_LOG_DEBUG, __VA_ARGS__)

/* ---- clocks ---- */
uint64_t erg_time_realtime_ns(void);
uint64_t erg_time_monotonic_ns(void);
void erg_time_sleep_ns(uint64_t ns);
#define ERG_NS_PER_S 1000000000ULL

/* ---- safe names ----
 * Every key that comes from a process name, a cgroup or a PDU label passes
 * through erg_name_sanitize before it becomes part of a path, and through
 * erg_html_escape before it becomes page text. */
#define ERG_NAME_MAX 96
/* Writes a file-name-safe form of `in` ([A-Za-z0-9._-], no leading '.',
 * at most ERG_NAME_MAX-1 bytes) to out. When anything was changed a short
 * hash of the original is appended so distinct inputs stay distinct. */
void erg_name_sanitize(const char *in, size_t inlen, char out[ERG_NAME_MAX]);
/* 1 when s could be a name erg_name_sanitize made: non-empty, shorter than
 * ERG_NAME_MAX, [A-Za-z0-9._-] only, no leading '.'. Readers check names
 * from index files and directories with it before using them in a path. */
int erg_name_is_safe(const char *s);
/* HTML-escapes and drops control bytes; returns a malloc'd string. */
char *erg_html_escape(const char *in);
/* JSON string body escaping into a malloc'd string (no quotes added). */
char *erg_json_escape(const char *in, size_t inlen);
/* Length (1-4) of the valid UTF-8 sequence at p, reading at most n bytes;
 * 0 when the bytes there are none (stray continuation byte, overlong form,
 * surrogate, beyond U+10FFFF, cut short). */
size_t erg_utf8_len(const char *p, size_t n);
/* Makes s valid UTF-8 in place: every byte that is not part of a valid
 * sequence becomes '?', and so does every control byte (< 0x20, DEL) when
 * controls is set; the length stays. Returns the number of bytes changed. */
size_t erg_utf8_fix(char *s, int controls);
/* One CSV text field (RFC 4180: quoted, quotes doubled) that is valid
 * UTF-8 without control bytes ('?' for them), and that no spreadsheet runs
 * as a formula: a text starting with '=', '+', '-', '@' gets a leading '\''. */
void erg_csv_text(FILE *f, const char *s);
uint64_t erg_hash_fnv1a(const void *data, size_t len);

/* ---- name index (index.c) ----
 * Finds an entry of the caller's array by its name in O(1): open
 * addressing (FNV-1a, linear probing) from a name to the entry's position
 * + 1, 0 marking a free slot. The caller owns the array and keeps the
 * index at more slots than entries (2x: short probes) by rebuilding it
 * whenever the array grows; entries are only ever appended. */
struct erg_name_index {
  uint32_t *slot;
  size_t len; /* a power of two; 0 before the first rebuild */
};
/* The name of entries[i]. */
typedef const char *(*erg_name_of_fn)(const void *entries, size_t i);
/* The slot holding name's position + 1, or the free slot where it goes
 * (store the new entry's position + 1 there); NULL before the first
 * rebuild. */
uint32_t *erg_name_index_slot(const struct erg_name_index *x, const char *name,
                              erg_name_of_fn name_of, const void *entries);
/* Makes the index len slots (a power of two > n) over entries[0..n); -1
 * out of memory, the index then as it was. */
int erg_name_index_rebuild(struct erg_name_index *x, size_t len, erg_name_of_fn name_of,
                           const void *entries, size_t n);
/* Frees the slots; x may be NULL, its slots NULL. */
void erg_name_index_free(struct erg_name_index *x);

/* ---- wire format ---- */
/* Serialises env into a malloc'd buffer; returns its length or 0 on failure. */
size_t erg_wire_pack(const Erg__Envelope *env, uint8_t **out);
/* Decodes and validates one message. Returns NULL and a static reason in
 * *why for malformed, wrong-version or insane messages. Free with
 * erg_wire_free. */
Erg__Envelope *erg_wire_unpack(const uint8_t *buf, size_t len, const char **why);
void erg_wire_free(Erg__Envelope *env);

/* ---- config ----
 * A small INI front end over inih that reports "file:line: message" errors. */
struct erg_config_error {
  char msg[512];
};
/* Parser callback: return 0 on success, else write a reason to why (without
 * file/line) and return -1. */
typedef int (*erg_config_handler)(void *user, const char *section, const char *key,
                                  const char *value, char *why, size_t whylen);
int erg_config_parse(const char *path, erg_config_handler h, void *user,
                     struct erg_config_error *err);
/* The same with the key's line number passed to the handler, for checks
 * that run after the section (a value that depends on another key) and
 * still name FILE:LINE. */
typedef int (*erg_config_line_handler)(void *user, int line, const char *section, const char *key,
                                       const char *value, char *why, size_t whylen);
int erg_config_parse_lines(const char *path, erg_config_line_handler h, void *user,
                           struct erg_config_error *err);
/* Value helpers; return 0 on success, -1 with reason in why. */
int erg_config_double(const char *value, double min, double max, double *out, char *why,
                      size_t whylen);
int erg_config_long(const char *value, long min, long max, long *out, char *why, size_t whylen);
int erg_config_bool(const char *value, bool *out, char *why, size_t whylen);
/* A ZeroMQ endpoint erg can bind or connect: tcp://HOST:PORT or ipc://PATH. */
int erg_config_endpoint(const char *value, char *why, size_t whylen);

/* ---- CURVE keys (Z85 text, 40 characters) ----
 * Key files hold one key on the first line that is not empty or a comment;
 * authorised-key lists hold one key per line, optionally followed by a
 * comment (usually the node name). */
#define ERG_KEY_Z85_LEN 40
int erg_key_read_file(const char *path, char out[ERG_KEY_Z85_LEN + 1], char *why, size_t whylen);
/* Parses a list file into n keys (binary, 32 bytes each); returns count or -1. */
int erg_key_read_list(const char *path, uint8_t (**keys)[32], char *why, size_t whylen);
/* Writes a fresh key pair to PREFIX.key (0600) and PREFIX.pub. */
int erg_key_generate(const char *prefix, char pub_out[ERG_KEY_Z85_LEN + 1], char *why,
                     size_t whylen);

/* ---- small string helpers ---- */
/* Copies at most dstlen-1 bytes and always NUL-terminates. */
void erg_strlcpy(char *dst, const char *src, size_t dstlen);
/* Reads a whole small file into buf (NUL-terminated); returns bytes or -1. */
long erg_read_file(const char *path, char *buf, size_t buflen);
/* mkdir -p */
int erg_mkdir_p(const char *path, unsigned mode);
/* Writes data to path atomically (temp file + rename). -1 with errno. */
int erg_write_file_atomic(const char *path, const void *data, size_t len);
/* The same, synced: the file before the rename, its directory after, so a
 * power loss leaves the old content or the new (files that must survive). */
int erg_write_file_durable(const char *path, const void *data, size_t len);
/* A small state file (ergd's NODE.lag, NODE.tailwin): written atomically,
 * 0 or -1 with "path: reason" in why; read whole into buf, 1 read, 0 when
 * there is none (ENOENT), -1 with why. */
int erg_state_file_write(const char *path, const char *text, char *why, size_t whylen);
int erg_state_file_read(const char *path, char *buf, size_t buflen, char *why, size_t whylen);

#endif
