// SPDX-License-Identifier: BSD-3-Clause
// cxx_threads.cpp - std::thread, std::mutex, std::condition_variable: a
// bounded queue with two producers and two consumers; the consumers' sums
// go to stdout and to the file given as argument.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace {
std::mutex mu;
std::condition_variable not_empty, not_full;
std::deque<std::uint64_t> q;
int producers_left = 2;
constexpr std::size_t cap = 16;
constexpr std::uint64_t per_producer = 5000;

void produce(std::uint64_t base)
{
	for (std::uint64_t i = 0; i < per_producer; i++) {
		std::unique_lock<std::mutex> l(mu);
		not_full.wait(l, [] { return q.size() < cap; });
		q.push_back(base + i);
		not_empty.notify_one();
	}
	std::lock_guard<std::mutex> g(mu);
	producers_left--;
	not_empty.notify_all();
}

void consume(std::uint64_t *sum, std::uint64_t *count)
{
	for (;;) {
		std::unique_lock<std::mutex> l(mu);
		not_empty.wait(l, [] { return !q.empty() || producers_left == 0; });
		if (q.empty())
			return;
		*sum += q.front();
		(*count)++;
		q.pop_front();
		not_full.notify_one();
	}
}
} // namespace

int main(int argc, char **argv)
{
	std::uint64_t sum[2] = {0, 0}, count[2] = {0, 0};
	std::vector<std::thread> ts;
	ts.emplace_back(produce, 0);
	ts.emplace_back(produce, 1000000);
	ts.emplace_back(consume, &sum[0], &count[0]);
	ts.emplace_back(consume, &sum[1], &count[1]);
	for (auto &t : ts)
		t.join();
	std::printf("items %llu sum %llu\n", (unsigned long long)(count[0] + count[1]),
		    (unsigned long long)(sum[0] + sum[1]));
	if (argc > 1) {
		std::ofstream f(argv[1]);
		f << "items " << count[0] + count[1] << " sum " << sum[0] + sum[1] << "\n";
	}
	return 0;
}
