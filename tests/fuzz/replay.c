/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs a committed fuzz corpus through its target in an ordinary build, so
 * every input that once found something stays a regression test. Arguments
 * are corpus directories; an empty or missing corpus fails, so the test
 * cannot pass by finding nothing to run.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0) {
		fprintf(stderr, "%s: cannot read\n", path);
		return -1;
	}
	rewind(f);
	/* Exactly @size bytes, so a sanitizer build sees any over-read. */
	data = malloc(size ? (size_t)size : 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned files = 0;

	for (int i = 1; i < argc; i++) {
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, alphasort);

		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];

			if (names[j]->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
				if (run_file(path) < 0)
					return 1;
				files++;
			}
			free(names[j]);
		}
		free(names);
	}
	printf("%u corpus files replayed\n", files);
	return files ? 0 : 1;
}
