// lockbench-bench: benchmarks, each against a baseline measured in the same run.
print("usage: lockbench-bench <audit|transaction|nfc|ble>")
