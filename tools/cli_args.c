/* The option sets several commands share (cli_args.h). */
#include "cli_args.h"

#include <getopt.h>

#include "cli.h"

int cli_args_json(const char *cmd, int argc, char **argv, bool *json)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c != 'j') return cli_bad_option(cmd, argv);
        *json = true;
    }
    return CLI_OK;
}

int cli_args_output(const char *cmd, int argc, char **argv, const char **out)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c != 'o') return cli_bad_option(cmd, argv);
        *out = optarg;
    }
    return CLI_OK;
}

int cli_args_output_weights(const char *cmd, int argc, char **argv, const char **out,
                            const char **weights)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"weights", required_argument, NULL, 'w'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:w:", opts, NULL)) != -1) {
        if (c == 'o')
            *out = optarg;
        else if (c == 'w')
            *weights = optarg;
        else
            return cli_bad_option(cmd, argv);
    }
    return CLI_OK;
}
