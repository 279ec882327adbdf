# bench/core: hot-path cost of the core (Enter/Leave pair, tr_time).
add_executable(bench_core core_bench.c)
