# A memory hog bound to node 1: numaplaced's report must put (nearly) all of
# its memory there and agree with numastat -p (hog-placement.check.py).
. /np/guest-lib.sh
set -e

np_numa_balancing 0
np_start_hog hog.out --mib 128 --node 1 --pause-ms 200
echo "$NP_HOG_PID" >pid
numastat -p "$NP_HOG_PID" >numastat-before.txt
numaplaced --report --json >report.json
numastat -p "$NP_HOG_PID" >numastat.txt
cat numastat.txt
numaplaced --report
kill "$NP_HOG_PID"
wait "$NP_HOG_PID"
tail -n 1 hog.out
for f in pid report.json numastat-before.txt numastat.txt; do
	np_emit "$f" "$f"
done
