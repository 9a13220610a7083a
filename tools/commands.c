/* The command table: one line per command or command group. */
#include <string.h>

#include "cli.h"
#include "commands.h"

static const cli_command commands[] = {
    {"info", "detect the format of files and summarise them", cmd_info, cmd_info_help},
    {"tensor", "inspect, convert and generate .npy and safetensors files", cmd_tensor,
     cmd_tensor_help},
    {"cnn2", "CNN v2 weight files: validate, inspect, pack, unpack, render", cmd_cnn2,
     cmd_cnn2_help},
    {"mgk", "Ingenic MGK models: inspect, extract and replace weights", cmd_mgk, cmd_mgk_help},
    {"rknpu", "Rockchip RK3588 NPU: register streams, matmul generation, layouts", cmd_rknpu,
     cmd_rknpu_help},
    {"edgetpu", "Coral Edge TPU models: inspect, weights, reference execution", cmd_edgetpu,
     cmd_edgetpu_help},
    {"tflite", "TFLite models: inspect, run on the CPU interpreter, cut", cmd_tflite,
     cmd_tflite_help},
};

const cli_command *cli_commands(int *count)
{
    *count = (int)(sizeof commands / sizeof commands[0]);
    return commands;
}

const cli_command *cli_find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}
