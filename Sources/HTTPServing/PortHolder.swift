import Foundation

/// Who listens on a TCP port, as far as /proc tells: the socket's inode from /proc/net/tcp(6),
/// then the process holding that inode among its file descriptors. Used to say who holds a
/// port a server could not bind ("port 8480 is in use by pid 1234 (lockbench-server)").
/// Sockets of other users' processes are invisible to an unprivileged reader: then nil.
public enum PortHolder {
    /// "pid N (command)" for the process listening on `port`, or nil when /proc does not tell.
    public static func describe(port: Int, proc: String = "/proc") -> String? {
        let inodes = listeningInodes(port: port, proc: proc)
        guard !inodes.isEmpty, let pid = process(holding: inodes, proc: proc) else { return nil }
        let comm = (try? String(contentsOfFile: "\(proc)/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines).prefix(64) ?? "?"
        return "pid \(pid) (\(comm))"
    }

    /// The "port N is in use" sentence servers refuse with, naming the holder when known.
    public static func inUse(host: String, port: Int) -> String {
        "cannot listen on \(host):\(port): the port is in use"
            + (describe(port: port).map { " by \($0)" } ?? "")
            + "; stop that program, or pick another --port (0: any free port)"
    }

    /// Inodes of LISTEN sockets (state 0A) bound to `port`, from /proc/net/tcp and tcp6.
    static func listeningInodes(port: Int, proc: String) -> Set<String> {
        var inodes = Set<String>()
        for table in ["tcp", "tcp6"] {
            guard let text = try? String(contentsOfFile: "\(proc)/net/\(table)", encoding: .utf8) else { continue }
            // Lines: "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …".
            for line in text.split(separator: "\n").dropFirst().prefix(100_000) {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == "0A",
                      let colon = fields[1].lastIndex(of: ":"),
                      Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }

    /// The first process (by /proc order) with a descriptor on one of `inodes`; bounded walk.
    static func process(holding inodes: Set<String>, proc: String) -> Int? {
        let targets = Set(inodes.map { "socket:[\($0)]" })
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: proc) else { return nil }
        for entry in entries.prefix(100_000) {
            guard let pid = Int(entry),
                  let fds = try? FileManager.default.contentsOfDirectory(atPath: "\(proc)/\(pid)/fd") else { continue }
            for fd in fds.prefix(65_536) {
                if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(pid)/fd/\(fd)"),
                   targets.contains(link) {
                    return pid
                }
            }
        }
        return nil
    }
}
