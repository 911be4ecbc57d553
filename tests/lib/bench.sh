# Helpers the benchmarks (tests/bench/*.sh) share; source it from the tree's top.

# median: the median of the numbers on stdin, one a line (the mean of the middle two when
# their count is even).
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
