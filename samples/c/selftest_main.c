/* The `selftest` target: runs NAME_selftest (NAME_selftest.c, written by `mlitool convert
 * --selftest N`), which prints every layer's CRC (the log `mlitool verify --board-log` reads) and
 * returns 0 when every layer computes what mlitool computed for the build the header names. */
#include <stdio.h>

#include "model.h"

int main(void) {
    unsigned layer = 0u, sample = 0u;
    int code = model_selftest(&layer, &sample);
    if (code != 0) {
        printf("%s self-test failed: code %d, sample %u, layer %u (the layer list of %s.h)\n",
               MODEL_NAME, code, sample, layer, MODEL_NAME);
    }
    return code;
}
