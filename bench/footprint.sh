#!/usr/bin/env bash
# footprint.sh: what one iteration of a benchmark costs the processor
# beyond its instructions. It builds the test binary of one package from
# the working tree and runs each named benchmark twice under valgrind's
# cachegrind with its cache and branch simulation (GOMAXPROCS=1), for N
# and 3N iterations; the difference, divided by 2N, is one iteration with
# the setup left out. It prints instructions, first-level instruction and
# data cache misses, and mispredicted branches: figures unmoved by load,
# which say whether a gap in time is work done (instructions) or the
# memory and code the work touches (misses). The instructions include the
# collector's, whose cycles fall differently from one run to the next
# (up to a fifth of a session's count at the default N); the misses are
# steadier.
#
#   bench/footprint.sh [-p PKG] [-t N] [BENCHMARK...]
#
#   -p PKG      the package, from the repository's root: ./bench (the
#               default), ./mcp, ./jsonrpc, ...
#   -t N        iterations of the shorter run (default 2000)
#   BENCHMARK   a sub-benchmark of the package, as Top/sub (default, for
#               ./bench: the server's and the client's side of a session
#               set up, each alone, and a whole session over loopback, for
#               the floor and mcpkit without the GET stream)
#
# Examples: bench/footprint.sh HTTPSessionHandler/floor HTTPSessionHandler/mcpkit-nostream
#           bench/footprint.sh -p ./mcp -t 10000 CallByEra/handshake CallByEra/modern
# It needs valgrind. A run of the defaults takes about three minutes.
set -euo pipefail

n=2000 pkg=./bench
while getopts "p:t:" opt; do
	case $opt in
	p) pkg=$OPTARG ;;
	t) n=$OPTARG ;;
	*) sed -n '2,28p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
	if [ "$pkg" != ./bench ]; then
		echo "footprint.sh: name the benchmarks of $pkg" >&2
		exit 2
	fi
	set -- HTTPSessionHandler/floor HTTPSessionHandler/mcpkit-nostream \
		HTTPSessionClient/floor HTTPSessionClient/mcpkit-nostream \
		HTTPSessionSetup/floor HTTPSessionSetup/mcpkit-nostream
fi
command -v valgrind >/dev/null || { echo "footprint.sh: valgrind is needed" >&2; exit 1; }

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
dir=$root/${pkg#./}
[ -d "$dir" ] || { echo "footprint.sh: no package $pkg" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$dir" && go test -c -o "$tmp/bench.test" .)

# counts runs benchmark $1 for $2 iterations and prints its instructions,
# I1 misses, D1 misses and mispredicted branches, in that order.
counts() {
	(cd "$dir" && GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
		--cachegrind-out-file=/dev/null "$tmp/bench.test" -test.run '^$' \
		-test.bench "^Benchmark${1%%/*}\$/^${1#*/}\$" -test.benchtime "${2}x" 2>&1) |
		awk '/I +refs:/ {i=$4} /I1 +misses:/ {i1=$4} /D1 +misses:/ {d1=$4} /Mispredicts:/ {m=$3}
			END {gsub(",", "", i); gsub(",", "", i1); gsub(",", "", d1); gsub(",", "", m)
				if (i == "" || m == "") exit 1; print i, i1, d1, m}'
}

printf '%-40s %12s %10s %10s %12s\n' benchmark instructions I1-misses D1-misses mispredicts
for b in "$@"; do
	lo=$(counts "$b" "$n") || { echo "footprint.sh: $b did not run" >&2; exit 1; }
	hi=$(counts "$b" $((3 * n))) || { echo "footprint.sh: $b did not run" >&2; exit 1; }
	echo "$lo $hi" | awk -v b="$b" -v n="$n" '{
		printf "%-40s %12.0f %10.0f %10.0f %12.0f\n", b, ($5-$1)/(2*n), ($6-$2)/(2*n), ($7-$3)/(2*n), ($8-$4)/(2*n) }'
done
