/* npukit cnn2: CNN v2 weight files: validate, inspect, pack, unpack, render. */
#include "cli.h"
#include "commands.h"

void cmd_cnn2_help(FILE *out)
{
    fprintf(out, "usage: npukit cnn2 <command> [options]\n\nCNN v2 weight files: validate, inspect, pack, unpack, render.\n");
}

int cmd_cnn2(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("cnn2: not implemented yet");
}
