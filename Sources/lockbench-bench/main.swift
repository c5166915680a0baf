// lockbench-bench: benchmarks, each against a baseline measured in the same run.
import Foundation

switch CommandLine.arguments.dropFirst().first {
case "ble": exit(BLEBenchmark.run(Array(CommandLine.arguments.dropFirst(2))))
default: print("usage: lockbench-bench <audit|transaction|nfc|ble>")
}
