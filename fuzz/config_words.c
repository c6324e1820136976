// fuzz/config_words.c: the words of the config target's dictionary that
// the config keys' rows hold: each key as "key=" and each enum's names, in
// libFuzzer's dictionary syntax. `make fuzz` puts them after the words of
// fuzz/config.dict (mk/hardening.mk), so the dictionary has every key.
#include <stdio.h>
#include "io/config_parse.h"

static void print_words(const char *key, const char *value, void *ctx) {
    const ConfigKey *k = config_find_key(key);
    printf("\"%s=\"\n", key);
    for (int i = 0; k->names && k->names[i]; i++) printf("\"%s\"\n", k->names[i]);
}

int main(void) {
    Config c = config_default();
    config_foreach_field(&c, print_words, NULL);
    return 0;
}
