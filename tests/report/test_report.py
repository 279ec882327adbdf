#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_report.py CASE - tests of our OTF2 reader and the `tracer` command.

Environment (set by CMakeLists.txt): RECORDS_TAB, OTF2R_DUMP, FMT_DUAL (may
be empty), TRACER_LIB, DEMO, TRACER (build/bin/tracer), WORK, SRC, MPIRUN,
MPI_DEMO, CHROMIUM.
Every archive is also read by the reference reader (python3-otf2), the
oracle for every number checked.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_cases_html  # noqa: E402
import report_cases_text  # noqa: E402
from report_lib import runcheck  # noqa: E402

# every case_<name> of the case modules (CTest runs one case per test)
CASES = {n[5:]: f for m in (report_cases_text, report_cases_html) for n, f in vars(m).items() if n.startswith('case_')}


def main():
    case = sys.argv[1]
    fn = CASES.get(case)
    if not fn:
        sys.exit('unknown case ' + case)
    return runcheck.run_case(fn, case)


if __name__ == '__main__':
    sys.exit(main())
