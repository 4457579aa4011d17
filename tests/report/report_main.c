/* `erg report` / `erg graph` for the tests until cli/erg.c dispatches them:
 * report_main report ARGS... or report_main graph ARGS... */
#include <stdio.h>
#include <string.h>

#include "erg_web.h"

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "report"))
    return erg_report_cli(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "graph"))
    return erg_graph_cli(argc - 1, argv + 1);
  fprintf(stderr, "usage: report_main report|graph ARGS...\n");
  return 1;
}
