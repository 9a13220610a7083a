/* Shared helpers of the npukit command-line tool. The CLI is a thin layer:
 * it parses options, calls libnpukit and prints results and errors. */
#ifndef NPK_CLI_H
#define NPK_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "npukit/npukit.h"

#ifdef NPK_HAVE_CJSON
#include <cjson/cJSON.h>
#endif

/* Exit statuses. */
enum {
    CLI_OK = 0,       /* success */
    CLI_PROBLEMS = 1, /* the operation ran but found problems (e.g. validation) */
    CLI_FAIL = 2      /* usage error, unreadable, unrecognised or malformed input */
};

/* A command or command group. run() gets argv[0] = the command name. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*help)(FILE *out);
} cli_command;

/* The command table (commands.c). */
const cli_command *cli_commands(int *count);
const cli_command *cli_find_command(const char *name);

/* A subcommand of a group, e.g. "validate" in "npukit cnn2 validate". */
typedef struct cli_subcommand {
    const char *name;
    const char *usage; /* one line: arguments and options */
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_subcommand;

/* Dispatch argv[1] among subs; handles "--help" and unknown names. */
int cli_dispatch(const char *group, const cli_subcommand *subs, int nsubs, int argc, char **argv);
void cli_group_help(FILE *out, const char *group, const char *about, const cli_subcommand *subs,
                    int nsubs);

/* Print "npukit: FILE: offset 0x..: message" (file may be NULL); returns CLI_FAIL. */
int cli_error(const char *file, const npk_error *err);
/* An error about a tensor read from `file` (its shape, its values): the
 * file and, when the reader recorded it, the offset of the tensor's shape
 * in the file's header. Returns CLI_FAIL. */
int cli_tensor_fail(const char *file, const npk_tensor *t, const char *fmt, ...) NPK_PRINTF(3, 4);
/* Print "npukit: message"; returns CLI_FAIL. */
int cli_fail(const char *fmt, ...) NPK_PRINTF(1, 2);
/* A usage error for `cmd`: message plus a pointer to --help; returns CLI_FAIL. */
int cli_usage(const char *cmd, const char *fmt, ...) NPK_PRINTF(2, 3);

/* Handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE (temporary files
 * removed, then the default action) and SIGBUS on a mapped input that was
 * cut short (one error line naming the file, exit 2). Called by main(). */
void cli_install_signal_handlers(void);
/* With `-o -` / `--output -` among the arguments, standard output carries
 * the data: the command's own messages go to standard error. Called by main(). */
void cli_route_stdout(int argc, char **argv);

/* Prepare getopt_long() for a fresh parse, with its own messages off. */
void cli_getopt_reset(void);
/* Report the option getopt_long() just rejected; returns CLI_FAIL. */
int cli_bad_option(const char *cmd, char **argv);

/* True when s ends with suffix (file name extensions). */
bool cli_ends_with(const char *s, const char *suffix);

/* Strict number parsing (decimal or 0x hex); false on junk or overflow. */
bool cli_parse_u64(const char *s, uint64_t *v);
bool cli_parse_i64(const char *s, int64_t *v);
bool cli_parse_double(const char *s, double *v);

/* A malloc'd copy of s that is valid UTF-8: each invalid byte becomes
 * U+FFFD; with printable, control characters become '?' too (for text
 * output). NULL when out of memory. */
char *cli_utf8_dup(const char *s, bool printable);

/* True when this build can print JSON (libcjson). */
bool cli_json_available(void);
/* For commands asked for --json in a build without JSON: report and return CLI_FAIL. */
int cli_no_json(void);

#ifdef NPK_HAVE_CJSON
/* The one way JSON leaves the CLI: strings that are not well-formed UTF-8
 * (names read from damaged files) are repaired first (invalid bytes ->
 * U+FFFD) and a warning on stderr says so. cli_json_text returns the text
 * (malloc'd, j is kept); cli_print_json prints it with a newline and frees j. */
char *cli_json_text(cJSON *j, bool compact);
void cli_print_json(cJSON *j, bool compact);
/* Add a u64 to an object: as a number when exactly representable, else a string. */
cJSON *cli_json_u64(cJSON *obj, const char *key, uint64_t v);
/* A string member; like every string of a JSON output it is made valid
 * UTF-8 when printed (cli_print_json / cli_json_text), whatever s holds. */
cJSON *cli_json_str(cJSON *obj, const char *key, const char *s);
/* "0x..." string. */
cJSON *cli_json_hex(cJSON *obj, const char *key, uint64_t v);
/* An npk_summary's fields as an object. */
cJSON *cli_summary_json(const npk_summary *s);
#endif

#endif
