/* The installed MPI library from a user's program (tests/install_test.sh and
 * scripts/test-deb-install.sh): 5 nodes over the ranks, each rank prints its range. */
#include <stdio.h>
#include <dpdo/mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dpdo_mpi *m = NULL;
    int rc = dpdo_mpi_create(&m, MPI_COMM_WORLD, 5, NULL, NULL);
    printf("rank %d hosts [%lld, %lld) rc %d\n", dpdo_mpi_rank(m), (long long)dpdo_mpi_first_node(m),
           (long long)dpdo_mpi_end_node(m), rc);
    dpdo_mpi_destroy(m);
    MPI_Finalize();
    return rc;
}
