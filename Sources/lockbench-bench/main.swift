// lockbench-bench: benchmarks, each against a baseline measured in the same run.
import Foundation

let benchArguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(benchArguments.dropFirst())
switch benchArguments.first {
case "audit": AuditBenchmark.main(rest)
case "transaction": exit(TransactionBenchmark.run(rest))
case "nfc": exit(NFCBenchmark.main(rest))
case "ble": exit(BLEBenchmark.run(rest))
case "durability": exit(DurabilityBenchmark.run(rest))
default:
    print("usage: lockbench-bench <audit|transaction|nfc|ble|durability> [options]")
    exit(2)
}
