#define _POSIX_C_SOURCE 200809L
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int valid_source(const char* s) {
  size_t n = strlen(s);
  if (n < 1 || n > 32) return 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      return 0;
    }
  }
  return 1;
}

static int parse_key(const char* hex, uint8_t key[KEY_SIZE]) {
  if (strlen(hex) != 2 * KEY_SIZE) return -1;
  for (int i = 0; i < KEY_SIZE; ++i) {
    int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return -1;
    key[i] = (uint8_t)(high << 4 | low);
  }
  return 0;
}

// One "<source> <key>" line: the source's node number (0 for any other source), -1 when malformed.
static int parse_line(char* line, uint8_t key[KEY_SIZE], char source[33]) {
  char* save = NULL;
  char* name = strtok_r(line, " \t", &save);
  char* hex = strtok_r(NULL, " \t", &save);
  if (!name || !hex || strtok_r(NULL, " \t", &save) || !valid_source(name) || parse_key(hex, key)) return -1;
  strcpy(source, name);
  char* end;
  long node = strncmp(name, "node", 4) ? 0 : strtol(name + 4, &end, 10);
  if (node < 1 || node > KEYS_MAX_NODE || *end || name[4] == '0') return 0;
  return (int)node;
}

int keys_load(const char* path, uint8_t keys[KEYS_MAX_NODE + 1][KEY_SIZE], int have[KEYS_MAX_NODE + 1]) {
  FILE* f = fopen(path, "r");
  if (!f) return perror(path), -1;
  struct stat st;
  if (fstat(fileno(f), &st) || (st.st_mode & 077)) {
    fprintf(stderr, "radio-sim: %s: the group or others may read it (chmod 600)\n", path);
    return fclose(f), -1;
  }
  char line[512];
  char (*seen)[33] = NULL;
  int seen_count = 0, number = 0, status = 0;
  while (status == 0 && fgets(line, sizeof line, f)) {
    ++number;
    line[strcspn(line, "\r\n")] = 0;
    const char* text = line + strspn(line, " \t");
    if (!*text || *text == '#') continue;
    uint8_t key[KEY_SIZE];
    char source[33];
    int node = parse_line(line, key, source);
    for (int i = 0; node >= 0 && i < seen_count; ++i) {
      if (!strcmp(seen[i], source)) node = -1;
    }
    if (node < 0) {
      fprintf(stderr, "radio-sim: %s line %d: not \"<source> <32 hex digits>\", or a source seen before\n", path,
              number);
      status = -1;
      break;
    }
    seen = realloc(seen, sizeof *seen * (size_t)(seen_count + 1));
    if (!seen) abort();
    strcpy(seen[seen_count++], source);
    if (node > 0) {
      memcpy(keys[node], key, KEY_SIZE);
      have[node] = 1;
    }
  }
  free(seen);
  fclose(f);
  return status;
}
