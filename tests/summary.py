#!/usr/bin/env python3
"""Count meson test results from testlog.json files: one closing line."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                result = json.loads(line)["result"]
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except OSError as e:
        print(f"{path}: {e.strerror}", file=sys.stderr)
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
