/* Unit tests for the agent's scope handling and the diskstats parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

static int failures;
#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                  \
    }                                                              \
  } while (0)

static void test_scope_set(void) {
  struct erg_agent_config cfg;
  char why[300];
  erg_agent_config_defaults(&cfg);
  CHECK(cfg.scope[0] == '\0');
  CHECK(erg_agent_scope_set(&cfg, "/a/b//", why, sizeof why) == 0 && !strcmp(cfg.scope, "/a/b"));
  CHECK(erg_agent_scope_set(&cfg, "/", why, sizeof why) == 0 && !strcmp(cfg.scope, "/"));
  CHECK(erg_agent_scope_set(&cfg, "a/b", why, sizeof why) != 0 && strstr(why, "absolute"));
  CHECK(erg_agent_scope_set(&cfg, "/a/../b", why, sizeof why) != 0);
}

static void test_scope_contains(void) {
  struct erg_agent *a = calloc(1, sizeof *a);
  CHECK(agent_scope_contains(a, "/anything"));
  strcpy(a->cfg.scope, "/");
  CHECK(agent_scope_contains(a, "/x/y"));
  strcpy(a->cfg.scope, "/a/b");
  CHECK(agent_scope_contains(a, "/a/b"));
  CHECK(agent_scope_contains(a, "/a/b/c"));
  CHECK(!agent_scope_contains(a, "/a/bc"));
  CHECK(!agent_scope_contains(a, "/a"));
  CHECK(!agent_scope_contains(a, ""));
  CHECK(!agent_scope_contains(a, NULL));
  free(a);
}

static int only_vda(const char *dev) { return !strcmp(dev, "vda"); }

static void test_diskstats(void) {
  const char *buf =
      "   7       0 loop0 5 0 80 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
      " 253       0 vda 100 7 2000 50 40 3 1000 60 0 90 110 0 0 0 0 0 0\n"
      " 253       1 vda1 90 7 1900 45 40 3 1000 60 0 80 100 0 0 0 0 0 0\n";
  uint64_t r, w;
  CHECK(erg_proc_parse_diskstats(buf, only_vda, &r, &w) == 0);
  CHECK(r == 2000 * 512 && w == 1000 * 512);
  CHECK(erg_proc_parse_diskstats(buf, NULL, &r, &w) == 0);
  CHECK(r == (80 + 2000 + 1900) * 512ull && w == 2000 * 512ull);
  CHECK(erg_proc_parse_diskstats("garbage\n", NULL, &r, &w) != 0 && r == 0 && w == 0);
}

int main(void) {
  test_scope_set();
  test_scope_contains();
  test_diskstats();
  if (failures)
    return 1;
  printf("ok\n");
  return 0;
}
