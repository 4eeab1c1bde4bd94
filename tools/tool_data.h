/* SPDX-License-Identifier: BSD-3-Clause */
/* What dpdo-train and dpdo-predict share: the usage error and reading the data file (LIBSVM or
 * CSV, gzip-compressed or not). Header-only: each tool is one program built from its .c file. */
#ifndef DPDO_TOOL_DATA_H
#define DPDO_TOOL_DATA_H

#include "dpdo/dpdo.h"
#include <stdio.h>
#include <string.h>

/* "TOOL: <fmt with arg>" and a pointer to --help on stderr; returns 2 (the usage exit status) */
static int tool_usage_error(const char *tool, const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", tool);
    fprintf(stderr, fmt, arg ? arg : "");
    fprintf(stderr, "\n(see %s --help)\n", tool);
    return 2;
}

/* Load `path` into ds as `format` ("csv" or LIBSVM) with the CSV settings; on failure the
 * dataset's message on stderr. Returns the status of the loader. */
static int tool_load_data(dpdo_dataset *ds, const char *tool, const char *path, const char *format,
                          long label_column, int header, int delimiter)
{
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.label_column = (int32_t)label_column;
    o.header = header;
    o.delimiter = delimiter;
    int rc = strcmp(format, "csv") == 0 ? dpdo_dataset_load_csv(ds, path, &o)
                                        : dpdo_dataset_load_libsvm(ds, path, &o);
    if (rc != DPDO_OK) fprintf(stderr, "%s: %s\n", tool, dpdo_dataset_errmsg(ds));
    return rc;
}

#endif
