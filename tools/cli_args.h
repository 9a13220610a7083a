/* The option sets several commands share word for word: the parse of a
 * command whose only option is --json, whose only option is -o/--output, or
 * whose options are -o/--output and -w/--weights.
 * Each runs getopt_long() over argv (optind then points at the first
 * operand) and reports a rejected option for `cmd`. */
#ifndef NPK_CLI_ARGS_H
#define NPK_CLI_ARGS_H

#include <stdbool.h>

/* --json: *json set when given. CLI_OK, or CLI_FAIL after the message. */
int cli_args_json(const char *cmd, int argc, char **argv, bool *json);
/* -o/--output FILE: *out set to the last one given (left as is when none).
 * CLI_OK, or CLI_FAIL after the message. */
int cli_args_output(const char *cmd, int argc, char **argv, const char **out);

/* -o/--output FILE and -w/--weights FILE, likewise. */
int cli_args_output_weights(const char *cmd, int argc, char **argv, const char **out,
                            const char **weights);

#endif
