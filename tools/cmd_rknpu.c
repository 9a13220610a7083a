/* npukit rknpu: Rockchip RK3588 NPU: register streams, matmul generation, layouts. */
#include "cli.h"
#include "commands.h"

void cmd_rknpu_help(FILE *out)
{
    fprintf(out, "usage: npukit rknpu <command> [options]\n\nRockchip RK3588 NPU: register streams, matmul generation, layouts.\n");
}

int cmd_rknpu(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("rknpu: not implemented yet");
}
