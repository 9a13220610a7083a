/* npukit: git-style front end. `npukit COMMAND [options]`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"

static void usage(FILE *out)
{
    int n;
    const cli_command *c = cli_commands(&n);
    fprintf(out,
            "usage: npukit <command> [options]\n"
            "       npukit help <command>\n"
            "       npukit --version\n\n"
            "--quiet (anywhere): no progress on a terminal (NPUKIT_PROGRESS=never|always).\n\n"
            "Reads, checks, converts and runs model files and command streams of edge NPUs.\n\n"
            "commands:\n");
    for (int i = 0; i < n; i++) fprintf(out, "  %-10s %s\n", c[i].name, c[i].summary);
    fprintf(out, "\nExit status: 0 success, 1 problems found, 2 bad usage or input.\n");
}

int main(int argc, char **argv)
{
    npk_protect_inputs_until_exit(true); /* an input is never overwritten */
    /* --quiet is global: taken out before the commands parse their options
     * (an argument after "--" is left alone). */
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            while (i < argc) argv[n++] = argv[i++];
            break;
        }
        if (!strcmp(argv[i], "--quiet"))
            cli_set_quiet(true);
        else
            argv[n++] = argv[i];
    }
    argv[n] = NULL;
    argc = n;
    cli_install_signal_handlers();       /* no temporary left behind, SIGBUS reported */
    cli_route_stdout(argc, argv);        /* `-o -`: data on stdout, messages on stderr */
    if (argc < 2) {
        usage(stderr);
        return CLI_FAIL;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "version") == 0) {
        printf("npukit %s (commit %s; features: %s; half precision: %s)\n", npk_version(),
               npk_commit(), npk_features()[0] ? npk_features() : "none", npk_half_path());
        return CLI_OK;
    }
    if (strcmp(a, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return CLI_OK;
        }
        const cli_command *c = cli_find_command(argv[2]);
        if (!c) return cli_fail("unknown command '%s' (see 'npukit --help')", argv[2]);
        if (argc >= 4) {
            /* "npukit help GROUP SUB" is "npukit GROUP help SUB" */
            char *sub[] = {argv[2], "help", argv[3], NULL};
            return c->run(3, sub);
        }
        c->help(stdout);
        return CLI_OK;
    }
    const cli_command *c = cli_find_command(a);
    if (!c) return cli_fail("unknown command '%s' (see 'npukit --help')", a);
    if (argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        c->help(stdout);
        return CLI_OK;
    }
    return c->run(argc - 1, argv + 1);
}
