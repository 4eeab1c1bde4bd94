/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the command-line fuzz harnesses: turn a fuzzer input into an
 * argv (arguments separated by NUL or newline bytes, at most 24, the first
 * being the program name) and run a tool's main with stdout and stderr sent
 * to /dev/null, so that the tools' messages do not flood the fuzzer's log. */
#ifndef DPDO_FUZZ_CLI_ARGS_H
#define DPDO_FUZZ_CLI_ARGS_H
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAX_ARGS 24

static int fuzz_run_main(int (*tool_main)(int, char **), const char *prog, const uint8_t *data,
                         size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[FUZZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)prog;
    char *s = buf, *end = buf + size;
    while (s <= end && argc < FUZZ_MAX_ARGS + 1) {
        char *t = s;
        while (t < end && *t != '\0' && *t != '\n') t++;
        *t = '\0';
        argv[argc++] = s;
        s = t + 1;
    }
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int out = dup(1), err = dup(2), nul = open("/dev/null", O_WRONLY);
    if (nul >= 0) {
        dup2(nul, 1);
        dup2(nul, 2);
    }
    int rc = tool_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    if (out >= 0) dup2(out, 1);
    if (err >= 0) dup2(err, 2);
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    if (nul >= 0) close(nul);
    free(buf);
    return rc;
}
#endif
