/* npukit edgetpu devices: accelerators on USB (a thin layer over
 * edgetpu_usb.h). `edgetpu run` is in cmd_edgetpu_run.c. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_args.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_usb.h"

int cmd_edgetpu_devices(int argc, char **argv);

static const char *speed_name(int s)
{
    switch (s) {
    case 1: return "USB 1 low speed";
    case 2: return "USB 1 full speed";
    case 3: return "USB 2 high speed";
    case 4: return "USB 3 SuperSpeed";
    case 5: return "USB 3 SuperSpeed+";
    default: return "speed unknown";
    }
}

int cmd_edgetpu_devices(int argc, char **argv)
{
    bool json = false;
    if (cli_args_json("edgetpu devices", argc, argv, &json)) return CLI_FAIL;
    if (optind != argc) return cli_usage("edgetpu devices", "no arguments expected");
    if (json && !cli_json_available()) return cli_no_json();
    npk_etpu_usb_info devs[16];
    size_t n = 0;
    npk_error err = {0};
    if (npk_etpu_usb_list(devs, 16, &n, &err)) return cli_error(NULL, &err);
#ifdef NPK_HAVE_CJSON
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            char id[16];
            snprintf(id, sizeof id, "%04x:%04x", devs[i].vid, devs[i].pid);
            cJSON_AddStringToObject(o, "port", devs[i].port);
            cJSON_AddNumberToObject(o, "bus", devs[i].bus);
            cJSON_AddNumberToObject(o, "address", devs[i].address);
            cJSON_AddStringToObject(o, "id", id);
            cJSON_AddStringToObject(o, "mode", devs[i].dfu ? "dfu" : "application");
            cJSON_AddStringToObject(o, "speed", speed_name(devs[i].speed));
            cJSON_AddItemToArray(arr, o);
        }
        cli_print_json(arr, false);
        return CLI_OK;
    }
#endif
    if (n == 0) printf("no Edge TPU accelerator found\n");
    for (size_t i = 0; i < n; i++)
        printf("%zu: usb %s (bus %u address %u): %04x:%04x, %s, %s\n", i, devs[i].port, devs[i].bus,
               devs[i].address, devs[i].vid, devs[i].pid,
               devs[i].dfu ? "DFU (bootloader) mode: runs need --firmware PATH"
                           : "application mode",
               speed_name(devs[i].speed));
    return CLI_OK;
}
