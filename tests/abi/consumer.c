/*
 * A downstream program built from an installed librmsnorm with nothing but
 * `pkg-config --cflags --libs rmsnorm`: one forward on the auto backend.
 */
#include <stdio.h>
#include <string.h>

#include <rmsnorm.h>

int main(void)
{
    float x[4] = {1.0f, -2.0f, 3.0f, -4.0f};
    float y[4] = {0};
    const rmsnorm_backend *be = rmsnorm_backend_find("ref");
    if (be == NULL) {
        (void)fprintf(stderr, "no ref backend\n");
        return 1;
    }
    rmsnorm_forward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.x.data = x;
    a.x.dtype = RMSNORM_F32;
    a.x.rows = 1;
    a.x.cols = 4;
    a.x.row_stride = 4;
    a.y = a.x;
    a.y.data = y;
    a.eps = 0.0f;
    rmsnorm_status st = rmsnorm_forward(be, &a, NULL);
    if (st != RMSNORM_OK) {
        (void)fprintf(stderr, "forward: %s\n", rmsnorm_status_string(st));
        return 1;
    }
    /* rms of (1, -2, 3, -4) is sqrt(7.5); no libm here, so the constant is spelled out */
    const double want = 0.36514837167011077;
    double e0 = (double)y[0] - want, e3 = (double)y[3] + 4.0 * want;
    if (e0 * e0 > 1e-12 || e3 * e3 > 1e-12) {
        (void)fprintf(stderr, "wrong result %g %g\n", (double)y[0], (double)y[3]);
        return 1;
    }
    (void)printf("consumer: librmsnorm %u.%u.%u on %s ok\n", rmsnorm_version() >> 16,
                 (rmsnorm_version() >> 8) & 0xffu, rmsnorm_version() & 0xffu,
                 rmsnorm_backend_name(be));
    return 0;
}
