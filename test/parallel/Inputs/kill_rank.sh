#!/usr/bin/env bash
# Kills one rank of a tensor-parallel run mid-run and checks that the job
# ends within seconds, non-zero, without leaving the output file.
#
# usage: kill_rank.sh OUTPUT -- MPIRUN ARGS...
#   runs MPIRUN ARGS... in the background, waits until it has two
#   transformer-runner processes that have run for a second, SIGKILLs the
#   last of them, and then gives the job 20 seconds to end.
set -u
output=$1
shift 2
"$@" > /dev/null 2>&1 &
job=$!
ranks=""
for _ in $(seq 200); do
  ranks=$(pgrep -P "$job" -f transformer-runner | sort -n)
  [ "$(echo "$ranks" | grep -c .)" -ge 2 ] && break
  sleep 0.1
done
if [ "$(echo "$ranks" | grep -c .)" -lt 2 ]; then
  echo "FAIL: the ranks did not start"; kill -9 "$job"; exit 1
fi
sleep 1
victim=$(echo "$ranks" | tail -1)
kill -9 "$victim"
start=$(date +%s)
for _ in $(seq 200); do
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$job" 2>/dev/null; then
  echo "FAIL: the job still runs 20 s after rank $victim was killed"
  pkill -9 -P "$job"; kill -9 "$job"; exit 1
fi
wait "$job"
status=$?
if [ "$status" -eq 0 ]; then
  echo "FAIL: the job exited 0 after a rank was killed"; exit 1
fi
if [ -e "$output" ]; then
  echo "FAIL: $output was written"; exit 1
fi
echo "PASS: the job ended (exit $status) $(( $(date +%s) - start )) s after a rank was killed, writing nothing"
