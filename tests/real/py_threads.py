# SPDX-License-Identifier: BSD-3-Clause
"""python3 threading under the tracer: worker threads share a counter under
a Lock, hand results over a Condition, and write a file (argv[1])."""
import sys
import threading

lock = threading.Lock()
cond = threading.Condition()
counter = 0
results = []


def work(k):
    global counter
    local = 0
    for i in range(20000):
        with lock:
            counter += 1
        local += i * k
    with cond:
        results.append((k, local))
        cond.notify()


threads = [threading.Thread(target=work, args=(k,), name='worker-%d' % k) for k in range(4)]
for t in threads:
    t.start()
with cond:
    cond.wait_for(lambda: len(results) == 4)
for t in threads:
    t.join()
with open(sys.argv[1], 'w') as f:
    for k, v in sorted(results):
        f.write('%d %d\n' % (k, v))
print('counter', counter)
print('results', sorted(results))
