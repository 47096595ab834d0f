/*
 * Reading back a CSV file (the record CSV of cxlssd-native and the trap
 * tests): its number of lines, and where its header puts the columns
 * wanted.  Header-only.
 */
#ifndef CXLSSD_TESTS_CSV_READ_H
#define CXLSSD_TESTS_CSV_READ_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The lines of @path, header included; 0 where it cannot be read. */
static inline uint64_t csv_count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    uint64_t lines = 0;
    int c;

    while (f && (c = fgetc(f)) != EOF) {
        lines += c == '\n';
    }
    if (f) {
        fclose(f);
    }
    return lines;
}

/* @idx[k] = the column of @names[k] (@n names) in the header line
 * @header, which strtok cuts up; -1 for a name it lacks. */
static inline void csv_header_columns(char *header, const char *const *names,
                                      int n, int *idx)
{
    for (int k = 0; k < n; k++) {
        idx[k] = -1;
    }
    int col = 0;
    for (char *tok = strtok(header, ",\n"); tok; tok = strtok(NULL, ",\n")) {
        for (int k = 0; k < n; k++) {
            if (!strcmp(tok, names[k])) {
                idx[k] = col;
            }
        }
        col++;
    }
}

#endif
