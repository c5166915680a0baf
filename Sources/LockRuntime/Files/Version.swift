/// LockBench's own version, printed by `lockbench --version`.
public enum LockBenchVersion {
    public static let current = "0.1.0"
}
