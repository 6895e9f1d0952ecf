#!/bin/sh
# gen-tree.sh DIR N: write N small C files and a Makefile that compiles each
# and links them, a stand-in for a kernel build's many short compiler runs.
set -eu
dir=$1
n=$2
mkdir -p "$dir"
i=0
while [ "$i" -lt "$n" ]; do
	j=0
	{
		echo '#include <string.h>'
		while [ "$j" -lt 6 ]; do
			echo "static int table_$j[64];"
			echo "int f${i}_$j(const char *s, int k)"
			echo '{'
			echo '	int h = k;'
			echo '	for (size_t x = 0; x < strlen(s); x++) {'
			echo '		h = h * 31 + s[x];'
			echo "		table_$j[h & 63] += h;"
			echo '	}'
			echo "	return h ^ table_$j[k & 63];"
			echo '}'
			j=$((j + 1))
		done
	} >"$dir/f$i.c"
	i=$((i + 1))
done
echo 'int main(void) { return 0; }' >"$dir/main.c"
{
	echo 'OBJS = main.o $(patsubst %.c,%.o,$(wildcard f*.c))'
	echo 'prog: $(OBJS)'
	printf '\t$(CC) -o $@ $(OBJS)\n'
	echo '%.o: %.c'
	printf '\t$(CC) -O2 -Wall -c -o $@ $<\n'
	echo 'clean:'
	printf '\trm -f prog *.o\n'
} >"$dir/Makefile"
