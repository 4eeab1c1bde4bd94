/* SPDX-License-Identifier: BSD-3-Clause */
/* Every public header compiles on its own, as C and as C++ (extern "C"),
 * and includes nothing but <stddef.h>, <stdint.h> and dpdo/ headers. The
 * compilations run through the system compiler; this file drives them. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

/* mpi.h (libdpdo_mpi) needs MPI's own header: its -I flags from `mpicc -show`, or "" if none. */
static const char *mpi_flags(void)
{
    static char flags[512];
    flags[0] = 0;
    FILE *p = popen("mpicc -show 2>/dev/null", "r");
    char word[256];
    if (!p) return flags;
    while (fscanf(p, "%255s", word) == 1)
        if (strncmp(word, "-I", 2) == 0 && strlen(flags) + strlen(word) + 2 < sizeof flags) {
            strcat(flags, " ");
            strcat(flags, word);
        }
    pclose(p);
    return flags;
}

static int compile(const char *compiler, const char *header, const char *lang)
{
    char src[128], cmd[1024];
    snprintf(src, sizeof src, "/tmp/dpdo_hdr_%d.%s", (int)getpid(), lang);
    FILE *f = fopen(src, "w");
    if (!f) return -1;
    fprintf(f, "#include <dpdo/%s>\n#include <dpdo/%s>\nint dpdo_test_dummy_(void);\n"
               "int dpdo_test_dummy_(void) { return 0; }\n",
            header, header);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s -Iinclude%s -Wall -Wextra -Werror %s -fsyntax-only %s 2>&1", compiler,
             strcmp(header, "mpi.h") == 0 ? mpi_flags() : "",
             strcmp(lang, "c") == 0 ? "-std=c99 -pedantic" : "-std=c++11 -pedantic", src);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[512];
    int printed = 0;
    while (fgets(line, sizeof line, p))
        if (printed++ < 5) printf("#   %s", line);
    int rc = pclose(p);
    remove(src);
    return rc;
}

static int only_allowed_includes(const char *header)
{
    char path[256], line[512];
    snprintf(path, sizeof path, "include/dpdo/%s", header);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = 1;
    while (fgets(line, sizeof line, f)) {
        const char *p = line;
        while (*p == ' ') p++;
        if (strncmp(p, "#include", 8) != 0 && strncmp(p, "#  include", 10) != 0) continue;
        if (strstr(p, "<stddef.h>") || strstr(p, "<stdint.h>") || strstr(p, "\"")) continue;
        if (strcmp(header, "mpi.h") == 0 && strstr(p, "<mpi.h>")) continue; /* libdpdo_mpi's header */
        printf("#   %s: forbidden include: %s", header, line);
        ok = 0;
    }
    fclose(f);
    return ok;
}

static void each_header_alone(void)
{
    DIR *d = opendir("include/dpdo");
    CHECK(d != NULL);
    if (!d) return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".h") != 0) continue;
        n++;
        if (strcmp(e->d_name, "mpi.h") == 0 && !*mpi_flags() && system("command -v mpicc >/dev/null 2>&1") != 0) {
            printf("# mpi.h skipped: no mpicc\n");
            continue;
        }
        CHECK_MSG(compile("cc", e->d_name, "c") == 0, "%s does not compile alone as C", e->d_name);
        if (system("command -v c++ >/dev/null 2>&1") == 0)
            CHECK_MSG(compile("c++", e->d_name, "cpp") == 0, "%s does not compile alone as C++",
                      e->d_name);
        CHECK(only_allowed_includes(e->d_name));
    }
    closedir(d);
    CHECK(n >= 5);
}

int main(void)
{
    RUN(each_header_alone);
    return h_finish();
}
