// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer target: the journal readers on the input as a node's journal
 * file: erg fit's reader (fit/journal.c, every row) and ergd's (the
 * header's columns and the resume point from the file's tail,
 * collector/journal.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "erg_collector.h"
#include "erg_fit.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_file_write("n1.csv", data, size);
  if (!path)
    return 0;
  struct erg_dataset ds;
  char why[256] = "";
  erg_dataset_init(&ds);
  if (erg_journal_read(&ds, path, why, sizeof why) != 0 && !why[0])
    abort(); /* a refusal always says why */
  if (ds.nfeatures > ERG_FIT_MAX_FEATURES)
    abort();
  erg_dataset_free(&ds);
  (void)erg_journal_columns(fuzz_dir, "n1");
  int64_t ignored;
  (void)erg_journal_last_end(fuzz_dir, "n1");
  (void)erg_journal_last_end_by(fuzz_dir, "n1", 1700000000, &ignored);
  return 0;
}
