# Moving a hog's pages from node 1 to node 0 with migratepages (numactl) is
# seen by the very next numaplaced report (migratepages.check.py).
. /np/guest-lib.sh
set -e

np_numa_balancing 0
np_start_hog hog.out --mib 128 --node 1 --pause-ms 50
echo "$NP_HOG_PID" >pid
numaplaced --report --json >report-before.json
start=$(cut -d' ' -f1 /proc/uptime)
migratepages "$NP_HOG_PID" 1 0
end=$(cut -d' ' -f1 /proc/uptime)
numaplaced --report --json >report-after.json
echo "migratepages took $(echo "$start $end" | awk '{ printf "%.2f", $2 - $1 }') s"
echo "node 0 pages: $(np_pages_on_node "$NP_HOG_PID" 0), node 1 pages: $(np_pages_on_node "$NP_HOG_PID" 1)"
kill "$NP_HOG_PID"
wait "$NP_HOG_PID"
echo "hog's slowest pass: $(tail -n 1 hog.out)"
for f in pid report-before.json report-after.json; do
	np_emit "$f" "$f"
done
