/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the command-line fuzz harnesses: turn a fuzzer input into an
 * argv (arguments separated by NUL or newline bytes, at most 24, the first
 * being the program name) and run a tool's main with its stdout sent to
 * /dev/null, and its stderr messages too -- but only the tool's: the harness
 * compiles the tool with `stderr` meaning fuzz_tool_stderr() (a stream on
 * /dev/null), while file descriptor 2 stays the real stderr, so that
 * sanitizer reports, libFuzzer's crash and timeout reports and stack traces
 * remain visible in the fuzzer's log. */
#ifndef DPDO_FUZZ_CLI_ARGS_H
#define DPDO_FUZZ_CLI_ARGS_H
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAX_ARGS 24

/* the tools' stderr (test code: a lazily opened process-wide stream is fine here) */
static FILE *fuzz_tool_stderr_stream;
static FILE *fuzz_tool_stderr(void)
{
    if (!fuzz_tool_stderr_stream) fuzz_tool_stderr_stream = fopen("/dev/null", "w");
    return fuzz_tool_stderr_stream ? fuzz_tool_stderr_stream : stdout;
}

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
    int out = dup(1), nul = open("/dev/null", O_WRONLY);
    if (nul >= 0) dup2(nul, 1);
    int rc = tool_main(argc, argv);
    fflush(stdout);
    fflush(fuzz_tool_stderr());
    if (out >= 0) dup2(out, 1);
    if (out >= 0) close(out);
    if (nul >= 0) close(nul);
    free(buf);
    return rc;
}
#endif
