// lockbench-bench: benchmarks, each against a baseline measured in the same run.
let benchArguments = Array(CommandLine.arguments.dropFirst())
switch benchArguments.first {
case "audit": AuditBenchmark.main(Array(benchArguments.dropFirst()))
default: print("usage: lockbench-bench <audit|transaction|nfc|ble>")
}
