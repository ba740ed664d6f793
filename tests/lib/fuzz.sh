# shellcheck shell=bash
# Helpers of the seeded fuzz tests (tests/vm/1a-fuzz-target.sh,
# tests/vm/1b-fuzz-oracle.sh); source after vmtest.sh.
#
# The generators set REPLY rather than print: a command substitution is a
# subshell, and bash reseeds RANDOM in each, so the seed would not repeat
# the run.

# pick WORD...: one of them.
pick() {
	local a=("$@")
	REPLY=${a[RANDOM % ${#a[@]}]}
}

# random_case WORD: WORD, half the time as it is, else each letter upper
# or lower case at random.
random_case() {
	local s=$1 out="" c i
	if ((RANDOM % 2)); then
		REPLY=$s
		return
	fi
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		((RANDOM % 2)) && c=${c^^}
		out+=$c
	done
	REPLY=$out
}

# kernel_problems FILE: the first lines of a saved kernel log that report
# a BUG, WARNING, Oops, hung task, sleeping in atomic context and the like.
kernel_problems() {
	grep -aE 'BUG|WARNING|Oops|general protection|hung_task: blocked|blocked for more than|sleeping function|scheduling while atomic|refcount_t|list_(add|del) corruption|UBSAN|KASAN|stack-protector' "$1" | head -n 5
}
