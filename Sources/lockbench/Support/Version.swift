/// LockBench's own version, printed by `lockbench --version`.
enum LockBenchVersion {
    static let current = "0.1.0"
}
