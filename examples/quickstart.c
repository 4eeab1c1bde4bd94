/* SPDX-License-Identifier: BSD-3-Clause */
/* quickstart: link against libdpdo and print what it is.
 *   cc quickstart.c $(pkg-config --cflags --libs dpdo) */
#include <stdio.h>
#include <dpdo/dpdo.h>

int main(void)
{
    /* The runtime twins tell a program which library it actually loaded. */
    printf("libdpdo %s (ABI %d)\n", dpdo_version_string(), dpdo_abi_major());
    if (dpdo_abi_major() != DPDO_ABI_MAJOR) {
        fprintf(stderr, "compiled against ABI %d, loaded %d\n", DPDO_ABI_MAJOR, dpdo_abi_major());
        return 1;
    }
    return 0;
}
