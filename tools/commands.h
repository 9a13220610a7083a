/* Entry points of the command groups, one file each under tools/. */
#ifndef NPK_COMMANDS_H
#define NPK_COMMANDS_H

#include <stdio.h>

int cmd_info(int argc, char **argv);
void cmd_info_help(FILE *out);
int cmd_tensor(int argc, char **argv);
void cmd_tensor_help(FILE *out);
int cmd_cnn2(int argc, char **argv);
void cmd_cnn2_help(FILE *out);
int cmd_mgk(int argc, char **argv);
void cmd_mgk_help(FILE *out);
int cmd_rknpu(int argc, char **argv);
void cmd_rknpu_help(FILE *out);
int cmd_edgetpu(int argc, char **argv);
void cmd_edgetpu_help(FILE *out);
int cmd_tflite(int argc, char **argv);
void cmd_tflite_help(FILE *out);

#endif
