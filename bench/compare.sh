#!/usr/bin/env bash
# compare.sh: the performance guard. It builds the test binary of one
# package at BASE (a commit) and at the working tree, runs the two
# alternately in pairs, and prints, for each benchmark, the ratio of the
# working tree's figure to BASE's: the median over the pairs and the
# spread (the lowest and highest pair). Alternating pairs cancel most of
# the drift of a noisy machine; ratios, not absolute figures, are what to
# read.
#
#   bench/compare.sh [-n PAIRS] [-p PKG] [-b REGEXP] [-t BENCHTIME] [-i] BASE
#
#   -n PAIRS      pairs to run (default 5)
#   -p PKG        the package, from the repository's root: ./mcp,
#                 ./jsonrpc, ... or ./bench for the nested bench module
#                 (default ./mcp)
#   -b REGEXP     the benchmarks (default: BenchmarkServerCallByEra|BenchmarkCallByEra|BenchmarkInProcessCallTool;
#                 with -p ./bench: BenchmarkInProcess)
#   -t BENCHTIME  -test.benchtime (default 1s; with -i, 2000x)
#   -i            count instructions with valgrind's cachegrind instead of
#                 timing (GOMAXPROCS=1; the whole pattern is one figure,
#                 instructions per iteration with the setup left out; exact
#                 and unmoved by load, but slow: pick one benchmark, and a
#                 BENCHTIME of the form Nx)
#
# Example: bench/compare.sh -n 6 HEAD~1
# Run it in every performance-sensitive change and quote it in the note.
set -euo pipefail

pairs=5 pkg=./mcp bench="" benchtime="" instr=0
while getopts "n:p:b:t:i" opt; do
	case $opt in
	n) pairs=$OPTARG ;;
	p) pkg=$OPTARG ;;
	b) bench=$OPTARG ;;
	t) benchtime=$OPTARG ;;
	i) instr=1 ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ]; then
	sed -n '2,25p' "$0"
	exit 2
fi
base=$1
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
rev=$(git rev-parse --verify "$base^{commit}")

if [ -z "$bench" ]; then
	if [ "$pkg" = ./bench ]; then
		bench='^BenchmarkInProcess$'
	else
		bench='^(BenchmarkServerCallByEra|BenchmarkCallByEra|BenchmarkInProcessCallTool)$'
	fi
fi
if [ -z "$benchtime" ]; then
	if [ $instr = 1 ]; then benchtime=2000x; else benchtime=1s; fi
fi
if [ $instr = 1 ] && [ "${benchtime%x}" = "$benchtime" ]; then
	echo "compare.sh: -i takes a BENCHTIME of the form Nx" >&2
	exit 2
fi
if [ $instr = 1 ] && ! command -v valgrind >/dev/null; then
	echo "compare.sh: -i needs valgrind (apt-get install valgrind)" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$rev" >/dev/null 2>&1

# build DIR OUT: the test binary of $pkg in the tree DIR.
build() {
	if [ "$pkg" = ./bench ]; then
		(cd "$1/bench" && go test -c -o "$2" .)
	else
		(cd "$1" && go test -c -o "$2" "$pkg")
	fi
}
echo "building $pkg at $base (${rev:0:12}) and at the working tree..." >&2
build "$work/base" "$work/base.test"
build "$root" "$work/new.test"
# The benchmarks read their testdata from the package's directory.
if [ "$pkg" = ./bench ]; then dir=bench; else dir=${pkg#./}; fi

# instructions BIN N: the instructions one process running the benchmarks
# for N iterations executes.
instructions() {
	(cd "$root/$dir" && GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no \
		--cachegrind-out-file=/dev/null "$1" -test.run '^$' -test.bench "$bench" \
		-test.benchtime "${2}x" 2>&1 | awk '/I *refs/ {gsub(",", "", $NF); print $NF}')
}

# run BIN OUT: one run of the benchmarks, appended to OUT as
# "name metric value" lines.
run() {
	if [ $instr = 1 ]; then
		# Instructions of the whole pattern at N and at N/5 iterations:
		# the difference, per iteration, leaves out the setup.
		local n=${benchtime%x} lo hi
		lo=$(instructions "$1" $((n / 5)))
		hi=$(instructions "$1" "$n")
		echo "$bench instr/op $(( (hi - lo) / (n - n / 5) ))" >>"$2"
	else
		(cd "$root/$dir" && "$1" -test.run '^$' -test.bench "$bench" -test.benchmem \
			-test.benchtime "$benchtime" 2>/dev/null) |
			awk '/^Benchmark/ { for (i = 3; i < NF; i += 2) print $1, $(i+1), $i }' >>"$2"
	fi
}
for i in $(seq 1 "$pairs"); do
	echo "pair $i of $pairs" >&2
	if [ $((i % 2)) = 1 ]; then
		run "$work/base.test" "$work/base.$i"
		run "$work/new.test" "$work/new.$i"
	else
		run "$work/new.test" "$work/new.$i"
		run "$work/base.test" "$work/base.$i"
	fi
done

# For each benchmark and metric: the ratio new/base in each pair, then
# the median and the extremes.
for i in $(seq 1 "$pairs"); do
	awk -v pair="$i" 'NR == FNR { b[$1 " " $2] = $3; next }
		($1 " " $2) in b && b[$1 " " $2] > 0 { print $1, $2, pair, $3 / b[$1 " " $2], b[$1 " " $2], $3 }' \
		"$work/base.$i" "$work/new.$i"
done | sort -k1,1 -k2,2 -k4,4g | awk -v base="$base" '
	function flush() {
		if (n == 0) return
		med = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
		printf "%-60s %-10s %7.3f  [%5.3f .. %5.3f]  base %s  new %s\n", key1, key2, med, r[1], r[n], bs[int((n + 1) / 2)], ns[int((n + 1) / 2)]
		n = 0
	}
	BEGIN { printf "%-60s %-10s %7s  %-16s  (medians)\n", "benchmark", "metric", "new/base", "spread"; }
	{ if ($1 != key1 || $2 != key2) { flush(); key1 = $1; key2 = $2 } n++; r[n] = $4; bs[n] = $5; ns[n] = $6 }
	END { flush() }'
